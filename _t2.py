import numpy as np, symdiff as sd, pickle
rng = np.random.default_rng(0)
X = rng.normal(size=(6, 3)); y = (rng.normal(size=6) > 0).astype(float) * 2 - 1
mask = np.arange(3) > 0
def logreg(w):
    return np.sum(np.log(1 + np.exp(-y * (X @ w)))) + 0.5 * np.sum((w * mask) ** 2)
def eyeq(w):
    A = np.eye(3) + 0.1 * np.ones((3, 3))
    return w @ A @ w
def wh(w):
    return np.sum(np.where(mask, w ** 2, np.sin(w)))
w = rng.normal(size=3)
def cd(f, w, h=1e-6):
    g = np.zeros_like(w)
    for i in range(w.size):
        e = np.zeros_like(w); e[i] = h
        g[i] = (f(w + e) - f(w - e)) / (2 * h)
    return g
for f in (logreg, eyeq, wh):
    for mode in ("auto", "forward"):
        g = sd.grad(f, wrt="w", shapes={"w": (3,)}, mode=mode)
        print(f.__name__, mode, np.max(np.abs(g(w) - cd(f, w))))
    H = sd.hessian(f, wrt="w", shapes={"w": (3,)})
    gg = sd.grad(f, wrt="w", shapes={"w": (3,)})
    Hn = np.array([cd(lambda v: gg(v)[i], w) for i in range(3)])
    print(" hess", np.max(np.abs(H(w) - Hn)), list(H.constants))
    hv = sd.hvp(f, wrt="w", shapes={"w": (3,)})
    print(" hvp", np.max(np.abs(hv(w, w) - Hn @ w)))
    vg = sd.value_and_grad(f, wrt="w", shapes={"w": (3,)})
    print(" vg", vg(w)[0] - f(w))
    J = sd.jacobian(lambda w: X @ w * mask[0], wrt="w", shapes={"w": (3,)})
    print(" jac", np.max(np.abs(J(w) - X * 0)))
g = sd.grad(logreg, wrt="w", shapes={"w": (3,)})
g2 = pickle.loads(pickle.dumps(g))
print("pickle", np.max(np.abs(g2(w) - g(w))), g2.constants.keys())
print(g.bind(X=X * 2)(w) - g(w))
X2 = rng.normal(size=(6,3))
def logreg2(w): return np.sum(np.log(1 + np.exp(-y * (X2 @ w))))
d = sd.derive(logreg, wrt="w", shapes={"w": (3,)})
print(str(d)[:1500])
print(g.exprs)
print(g.explain()[:800])
