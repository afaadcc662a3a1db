"""makemore's names: the validation and test loss (nats per character) of the shipped configs and
of a model the size of the microgpt the backpropagation walk-throughs describe, over several
seeds, with each run's wall time.

    python benchmarks/names.py              # every config, 3 seeds (about 16 minutes on 2 cores)
    python benchmarks/names.py --seeds 1    # one seed each

The lecture notebooks (Karpathy's "Building makemore") report, on the same 80/10/10 split of the
words: part 3, context 3, embedding 10, hidden 200 with batch norm (12,097 parameters): train
2.067, val 2.105; part 5, a hierarchical network of 76,579 parameters: val 1.993. No notebook
reports a test loss. Prints a Markdown table for benchmarks/README.md and writes
results_names.json.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mlp_manual.config import load_config  # noqa: E402
from mlp_manual.process import keep_freed_memory  # noqa: E402
from mlp_manual.runs.run import train_run  # noqa: E402

# a model of about 4,064 parameters, the size of the microgpt of the walk-throughs: context 3,
# embedding 16, hidden 47 with batch norm and tanh: 27*16 + 48*47 + 2*47 + (47*27 + 27) = 4,078
MICRO = ["model.layers=[{type: embedding, dim: 16}, {type: linear, units: 47, bias: false}, batchnorm, tanh, "
         "{type: linear}]", "name=names_micro"]
RUNS = {"configs/names_mlp.yaml": [], "configs/names_best.yaml": [], "configs/names_mlp.yaml (microgpt size)": MICRO}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=3)
    args = p.parse_args()
    keep_freed_memory()  # as every console script does when it starts (mlp_manual/process.py)
    os.chdir(ROOT)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, overrides in RUNS.items():
            path = label.split(" ")[0]
            rows = []
            for seed in range(args.seeds):
                cfg = load_config(path, [*overrides, f"seed={seed}"])
                s = train_run(cfg, str(Path(tmp) / f"{cfg.name}-{seed}"), echo=lambda line: None)
                rows.append({"seed": seed, "params": s["n_params"], "val": s["best"]["val_loss"],
                             "test": s["test"]["loss"], "seconds": s["wall_seconds"]})
                print(f"{label} seed {seed}: {rows[-1]}", flush=True)
            results[label] = rows
    print("\n| config | parameters | val loss (median; min-max) | test loss (median) | wall time per run |")
    print("|---|---|---|---|---|")
    for label, rows in results.items():
        val = [r["val"] for r in rows]
        print(f"| `{label}` | {rows[0]['params']:,} | {statistics.median(val):.4f} ({min(val):.4f}-{max(val):.4f}) | "
              f"{statistics.median(r['test'] for r in rows):.4f} | {statistics.median(r['seconds'] for r in rows):.0f} s |")
    (ROOT / "benchmarks" / "results_names.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
