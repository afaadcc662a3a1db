"""Exercise: a scalar that knows its gradient, micrograd style.

A Value holds a number (data), the gradient of the final output with respect to it (grad, 0
until backward runs), the Values it was made from (_prev) and a closure (_backward) that passes
its own grad on to them by the chain rule. `backward()` (given) visits the Values from the
output back to the inputs, each after every Value made from it, and calls their closures.

    out = a + b     =>  a.grad += 1 * out.grad,        b.grad += 1 * out.grad
    out = a * b     =>  a.grad += b.data * out.grad,   b.grad += a.data * out.grad
    out = a.tanh()  =>  a.grad += (1 - t**2) * out.grad, with t = out.data

Write the three closures. Why `+=` and not `=`? Think of `a + a`, or of `a` used by two
different Values: its gradient is the sum over every use.

Check it with `mlp-exercise check value`.
"""

import math


class Value:
    """A number with a gradient; + and * with numbers or Values, and tanh."""

    def __init__(self, data: float, _prev=()):
        self.data = float(data)
        self.grad = 0.0
        self._prev = tuple(_prev)
        self._backward = lambda: None

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other))

        def _backward():
            # >>> write here: the gradients of self and other, from out.grad (accumulate with +=)
            self.grad += 1.0 * out.grad
            other.grad += 1.0 * out.grad
            # <<<
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other))

        def _backward():
            # >>> write here: the gradients of self and other, from out.grad (accumulate with +=)
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
            # <<<
        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,))

        def _backward():
            # >>> write here: the gradient of self, from out.grad (accumulate with +=)
            self.grad += (1 - t**2) * out.grad
            # <<<
        out._backward = _backward
        return out

    __radd__ = __add__
    __rmul__ = __mul__

    def backward(self):
        """Every Value this one was made from gets its grad: the output's is 1, then each Value
        passes its grad back once every Value made from it has passed back to it."""
        order, seen = [], set()

        def visit(v):
            if id(v) not in seen:
                seen.add(id(v))
                for p in v._prev:
                    visit(p)
                order.append(v)
        visit(self)
        self.grad = 1.0
        for v in reversed(order):
            v._backward()

    def __repr__(self):
        return f"Value(data={self.data:.4g}, grad={self.grad:.4g})"
