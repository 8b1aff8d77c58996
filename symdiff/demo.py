"""A first look at symdiff: ``python -m symdiff.demo`` prints a derivation and a gradient."""

from __future__ import annotations

import numpy as np

import symdiff as sd


def main() -> None:
    """Derive sin(x)/x step by step, then compile and evaluate a gradient."""
    print(sd.derive("sin(x)/x", wrt="x"))
    print()
    expression = "sin(x)*exp(y)/(1 + x**2)"
    g = sd.grad(expression, wrt=["x", "y"])
    print(g.source)
    x = np.linspace(0.0, 1.0, 5)
    dx, dy = g(x, 0.5)
    print(f"gradient of {expression} at y = 0.5, x = {x}:")
    print("  d/dx =", np.array2string(dx, precision=6))
    print("  d/dy =", np.array2string(dy, precision=6))
    print(f"  largest error against central differences: "
          f"{sd.check_grad(expression, wrt=['x', 'y'], at={'x': x, 'y': 0.5}):.1e}")


if __name__ == "__main__":
    main()
