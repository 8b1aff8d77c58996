"""Tensor expressions several test modules share: logistic regression and a 2-layer MLP."""

LOGISTIC = "sum(log(1 + exp(-y * (X @ w))))"
LOGISTIC_SHAPES = {"X": ("n", "d"), "y": ("n",), "w": ("d",)}
MLP = (
    "mean(logsumexp(tanh(X @ W1 + b1) @ W2 + b2, axis=1)"
    " - sum(Y * (tanh(X @ W1 + b1) @ W2 + b2), axis=1))"
)
MLP_SHAPES = {"X": ("n", "d"), "Y": ("n", "k"), "W1": ("d", "h"), "b1": ("h",),
              "W2": ("h", "k"), "b2": ("k",)}
