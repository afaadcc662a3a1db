"""Exercise: a whole two-layer MLP's backward pass, written intermediate by intermediate.

The model reads the T = 3 characters before a position of a name and predicts the character
there (makemore's MLP, on the names list). ``forward`` (given) runs one batch and keeps every
intermediate it makes in ``cache``; ``backward`` (yours) walks the same lines in reverse.

N = batch size, T = 3 characters of context, E = embedding dim, H = hidden units,
V = 27 characters ('.' ends a name, then a..z).

    emb = C[Xb]                                  (N, T, E)   C (V, E), Xb (N, T) indices
    embcat = emb.reshape(N, T * E)               (N, T*E)
    hprebn = embcat @ W1 + b1                    (N, H)      W1 (T*E, H), b1 (H,)
    bnmeani = hprebn.mean(0, keepdims=True)      (1, H)
    bndiff = hprebn - bnmeani                    (N, H)
    bndiff2 = bndiff**2                          (N, H)
    bnvar = bndiff2.sum(0, keepdims=True) / N    (1, H)      the biased variance, 1/N (see below)
    bnvar_inv = (bnvar + EPS)**-0.5              (1, H)
    bnraw = bndiff * bnvar_inv                   (N, H)
    hpreact = bngain * bnraw + bnbias            (N, H)      bngain, bnbias (H,)
    h = tanh(hpreact)                            (N, H)
    logits = h @ W2 + b2                         (N, V)      W2 (H, V), b2 (V,)
    logit_maxes = logits.max(1, keepdims=True)   (N, 1)
    norm_logits = logits - logit_maxes           (N, V)
    counts = exp(norm_logits)                    (N, V)
    counts_sum = counts.sum(1, keepdims=True)    (N, 1)
    counts_sum_inv = counts_sum**-1              (N, 1)
    probs = counts * counts_sum_inv              (N, V)
    logprobs = log(probs)                        (N, V)
    loss = -logprobs[range(N), Yb].mean()        ()          Yb (N,) the characters to predict

The batch variance divides by N, as mlp_manual.core.BatchNorm1d normalises (makemore's lecture
divides by N - 1, Bessel's correction; the backward must follow whichever the forward used).

Backward (yours): the gradient of the loss with respect to every intermediate and every
parameter, named 'd' + its name: dlogprobs, dprobs, dcounts_sum_inv, ..., dW1, db1, demb, dC,
each shaped like what it is the gradient of. ``backward`` (given) gathers them from four parts,
each yours: ``loss_backward`` (the loss back to dlogits), ``output_layer_backward`` (to dhpreact),
``batchnorm_backward`` (to dhprebn) and ``first_layer_backward`` (to dC). Go from the loss back, one
forward line at a time. Where a value feeds two lines (counts, bndiff, hprebn), its gradient is
the sum of both paths; where the forward broadcast a (N, 1) column or a (1, H) row, the backward
sums over the axis it was broadcast along.

Check it with `mlp-exercise check mlp_backward`, or in a notebook:
`from mlp_manual.exercises import check; check("mlp_backward", backward)`.
"""

import numpy as np

EPS = 1e-5  # batch norm's eps, as in mlp_manual.core.BatchNorm1d


def forward(params: dict, Xb: np.ndarray, Yb: np.ndarray) -> dict:
    """The forward pass above, one batch. Inputs: params (C, W1, b1, bngain, bnbias, W2, b2),
    Xb (N, T) character indices, Yb (N,) the next characters. Returns the cache: the params,
    Xb, Yb and every intermediate, the loss last."""
    C, W1, b1 = params["C"], params["W1"], params["b1"]
    bngain, bnbias, W2, b2 = params["bngain"], params["bnbias"], params["W2"], params["b2"]
    n = Xb.shape[0]
    emb = C[Xb]  # (N, T, E)
    embcat = emb.reshape(n, -1)  # (N, T*E)
    hprebn = embcat @ W1 + b1  # (N, H)
    bnmeani = hprebn.mean(0, keepdims=True)  # (1, H)
    bndiff = hprebn - bnmeani  # (N, H)
    bndiff2 = bndiff**2  # (N, H)
    bnvar = bndiff2.sum(0, keepdims=True) / n  # (1, H), biased
    bnvar_inv = (bnvar + EPS)**-0.5  # (1, H)
    bnraw = bndiff * bnvar_inv  # (N, H)
    hpreact = bngain * bnraw + bnbias  # (N, H)
    h = np.tanh(hpreact)  # (N, H)
    logits = h @ W2 + b2  # (N, V)
    logit_maxes = logits.max(1, keepdims=True)  # (N, 1)
    norm_logits = logits - logit_maxes  # (N, V), max 0: exp cannot overflow
    counts = np.exp(norm_logits)  # (N, V)
    counts_sum = counts.sum(1, keepdims=True)  # (N, 1)
    counts_sum_inv = counts_sum**-1  # (N, 1)
    probs = counts * counts_sum_inv  # (N, V)
    logprobs = np.log(probs)  # (N, V)
    loss = -logprobs[range(n), Yb].mean()
    return dict(params, Xb=Xb, Yb=Yb, emb=emb, embcat=embcat, hprebn=hprebn, bnmeani=bnmeani, bndiff=bndiff,
                bndiff2=bndiff2, bnvar=bnvar, bnvar_inv=bnvar_inv, bnraw=bnraw, hpreact=hpreact, h=h,
                logits=logits, logit_maxes=logit_maxes, norm_logits=norm_logits, counts=counts,
                counts_sum=counts_sum, counts_sum_inv=counts_sum_inv, probs=probs, logprobs=logprobs, loss=loss)


def backward(cache: dict) -> dict:
    """The gradient of the loss with respect to every intermediate and parameter of ``cache``
    (what ``forward`` returned), keyed 'd' + its name, each shaped like what it is the gradient
    of: the four parts of the network below, from the loss back."""
    grads = loss_backward(cache)
    grads.update(output_layer_backward(cache, grads["dlogits"]))
    grads.update(batchnorm_backward(cache, grads["dhpreact"]))
    grads.update(first_layer_backward(cache, grads["dhprebn"]))
    return grads


def loss_backward(cache: dict) -> dict:
    """From the loss back to the logits, through the softmax written out line by line."""
    Yb, logits, logprobs, probs = cache["Yb"], cache["logits"], cache["logprobs"], cache["probs"]
    counts, counts_sum, counts_sum_inv = cache["counts"], cache["counts_sum"], cache["counts_sum_inv"]
    n = Yb.shape[0]
    # >>> write here: dlogprobs, dprobs, dcounts_sum_inv, dcounts_sum, dcounts, dnorm_logits, dlogit_maxes, dlogits
    # fwd: loss = -logprobs[range(N), Yb].mean()  =>  -1/N at each picked entry
    dlogprobs = np.zeros_like(logprobs)  # (N, V)
    dlogprobs[range(n), Yb] = -1.0 / n
    # fwd: logprobs = log(probs)
    dprobs = (1.0 / probs) * dlogprobs  # (N, V)
    # fwd: probs = counts * counts_sum_inv, counts_sum_inv broadcast along V
    dcounts_sum_inv = (counts * dprobs).sum(1, keepdims=True)  # (N, 1)
    dcounts = counts_sum_inv * dprobs  # (N, V), the first of counts' two paths
    # fwd: counts_sum_inv = counts_sum**-1
    dcounts_sum = (-counts_sum**-2) * dcounts_sum_inv  # (N, 1)
    # fwd: counts_sum = counts.sum(1, keepdims=True)  =>  each count gets dcounts_sum of its row
    dcounts += np.ones_like(counts) * dcounts_sum
    # fwd: counts = exp(norm_logits)
    dnorm_logits = counts * dcounts  # (N, V)
    # fwd: norm_logits = logits - logit_maxes, logit_maxes broadcast along V
    dlogits = dnorm_logits.copy()  # (N, V)
    dlogit_maxes = -dnorm_logits.sum(1, keepdims=True)  # (N, 1), zero up to rounding: the max cancels
    # fwd: logit_maxes = logits.max(1, keepdims=True)  =>  only the largest logit of a row gets it
    dlogits[range(n), logits.argmax(1)] += dlogit_maxes[:, 0]
    # <<<
    return dict(dlogprobs=dlogprobs, dprobs=dprobs, dcounts_sum_inv=dcounts_sum_inv, dcounts_sum=dcounts_sum,
                dcounts=dcounts, dnorm_logits=dnorm_logits, dlogit_maxes=dlogit_maxes, dlogits=dlogits)


def output_layer_backward(cache: dict, dlogits: np.ndarray) -> dict:
    """From dlogits (N, V) back through logits = h @ W2 + b2 and h = tanh(hpreact)."""
    h, hpreact, W2 = cache["h"], cache["hpreact"], cache["W2"]
    # >>> write here: dh, dW2, db2 and dhpreact
    # fwd: logits = h @ W2 + b2
    dh = dlogits @ W2.T  # (N, H)
    dW2 = h.T @ dlogits  # (H, V)
    db2 = dlogits.sum(0)  # (V,)
    # fwd: h = tanh(hpreact)
    dhpreact = (1.0 - h**2) * dh  # (N, H)
    # <<<
    return dict(dh=dh, dW2=dW2, db2=db2, dhpreact=dhpreact)


def batchnorm_backward(cache: dict, dhpreact: np.ndarray) -> dict:
    """From dhpreact (N, H) back through batch norm, line by line, to hprebn."""
    bngain, bndiff, bnvar, bnvar_inv, bnraw = (cache[k] for k in ("bngain", "bndiff", "bnvar", "bnvar_inv", "bnraw"))
    n = bndiff.shape[0]
    # >>> write here: dbngain, dbnbias, dbnraw, dbnvar_inv, dbnvar, dbndiff2, dbndiff, dbnmeani and dhprebn
    # fwd: hpreact = bngain * bnraw + bnbias
    dbngain = (bnraw * dhpreact).sum(0)  # (H,)
    dbnbias = dhpreact.sum(0)  # (H,)
    dbnraw = bngain * dhpreact  # (N, H)
    # fwd: bnraw = bndiff * bnvar_inv, bnvar_inv broadcast along N
    dbnvar_inv = (bndiff * dbnraw).sum(0, keepdims=True)  # (1, H)
    dbndiff = bnvar_inv * dbnraw  # (N, H), the first of bndiff's two paths
    # fwd: bnvar_inv = (bnvar + EPS)**-0.5
    dbnvar = (-0.5 * (bnvar + EPS)**-1.5) * dbnvar_inv  # (1, H)
    # fwd: bnvar = bndiff2.sum(0, keepdims=True) / N
    dbndiff2 = (1.0 / n) * np.ones_like(bndiff) * dbnvar  # (N, H)
    # fwd: bndiff2 = bndiff**2
    dbndiff += 2 * bndiff * dbndiff2
    # fwd: bndiff = hprebn - bnmeani, bnmeani broadcast along N
    dhprebn = dbndiff.copy()  # (N, H), the first of hprebn's two paths
    dbnmeani = -dbndiff.sum(0, keepdims=True)  # (1, H)
    # fwd: bnmeani = hprebn.mean(0, keepdims=True)
    dhprebn += (1.0 / n) * np.ones_like(dhprebn) * dbnmeani
    # <<<
    return dict(dbngain=dbngain, dbnbias=dbnbias, dbnraw=dbnraw, dbnvar_inv=dbnvar_inv, dbnvar=dbnvar,
                dbndiff2=dbndiff2, dbndiff=dbndiff, dbnmeani=dbnmeani, dhprebn=dhprebn)


def first_layer_backward(cache: dict, dhprebn: np.ndarray) -> dict:
    """From dhprebn (N, H) back through hprebn = embcat @ W1 + b1 and the embedding to C."""
    Xb, C, W1, emb, embcat = cache["Xb"], cache["C"], cache["W1"], cache["emb"], cache["embcat"]
    # >>> write here: dembcat, dW1, db1, demb and dC
    # fwd: hprebn = embcat @ W1 + b1
    dembcat = dhprebn @ W1.T  # (N, T*E)
    dW1 = embcat.T @ dhprebn  # (T*E, H)
    db1 = dhprebn.sum(0)  # (H,)
    # fwd: embcat = emb.reshape(N, T * E)
    demb = dembcat.reshape(emb.shape)  # (N, T, E)
    # fwd: emb = C[Xb]  =>  a character picked k times gets the sum of its k gradients
    dC = np.zeros_like(C)  # (V, E)
    np.add.at(dC, Xb, demb)
    # <<<
    return dict(dembcat=dembcat, dW1=dW1, db1=db1, demb=demb, dC=dC)
