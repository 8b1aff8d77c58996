"""The tensor layer: expressions over arrays with declared shapes, differentiated symbolically
and emitted as plain NumPy (``shapes=`` on every builder).

Pipeline (each a small module, imports pointing down the list)::

    shapes      dimensions (names or ints), broadcasting, the shape rule of every op
    ir          hash-consed nodes of a tensor expression
    simplify    peephole rewrites applied as nodes are built
    ops         node constructors: shape checks + simplify + interning
    literals    literal arguments (axes, indices, shapes) read from the syntax tree
    values      elementwise chains composed into one node (shared by parse and trace)
    parse       text -> nodes through an ast allow-list (the scalar parser's front end)
    captures    the bound constants of a trace: NumPy arrays it closes over or builds
    traced      the arrays a traced function sees, and the NumPy functions they understand
    trace       a Python function on traced arrays -> nodes
    elementwise partial derivatives of elementwise nodes by the scalar rule table
    vjp         TENSOR_VJPS: one vector-Jacobian product per op (reverse mode)
    jvp         TENSOR_JVPS: one Jacobian-vector product per op (forward mode)
    walk        the backward walk (unbroadcast once, fan-out summed) and the forward walk
    emit        nodes -> NumPy statements (inline views, composed elementwise, CSE)
    module      statements -> module text (header, helpers, shape checks, docstring)
    formula     nodes -> text and LaTeX formulas (.exprs, steps)
    request     a builder call parsed and validated: a TensorRequest (key, recipe)
    steps       the backward walk recorded as Steps (derive)
    build       the tensor layer of the build pipeline: request -> module text and recipe
                (memory, request index and disk cache: symdiff.pipeline, as for scalars)

Public behaviour (``shapes=`` on ``compile``, ``grad``, ``value_and_grad``, ``jacobian``,
``hessian``, ``hvp``):

* Every variable of the expression needs a shape; ``()`` declares a scalar. A variable without
  one is a ``ShapeError``; shapes given for names that do not occur are ignored (one mapping can
  serve several expressions). Dimensions are ints or names; a name must have one size across
  the arguments of a call. Tensor functions are not vectorized over extra leading axes.
* Shapes are inferred and checked when the function is built (``ShapeError`` naming the
  operation, both shapes and the text); at call time ``_check_shapes`` in the generated module
  raises ``ValueError`` naming the argument, its shape and the declared one.
* Results: ``grad`` -> an array of the variable's shape (a tuple for a list of names, in that
  order, or for ``wrt=None``: every variable, sorted; a traced function's parameters in the
  ``def``'s order); a ``wrt`` name that is not a variable of the expression is a
  ``ParseError`` (one that cancels, ``x - x``, gives zeros); ``hessian`` -> ``S + S`` (a tuple
  of tuples of blocks ``S_i + S_j`` for a list); ``jacobian(expr)`` -> ``O + S`` (output
  shape, then variable shape, as ``jax.jacobian``); ``jacobian([e1, ..., em])`` ->
  ``(m,) + O + S`` for same-shaped outputs;
  ``hvp`` (one ``wrt`` variable) takes a last argument ``_v`` of shape ``S`` and returns
  ``H @ _v`` of shape ``S``, without forming the ``S + S`` Hessian.
* Modes: gradients are reverse mode (``"auto"``, ``"reverse"``); ``mode="forward"`` pushes one
  tangent per entry of the variable instead. Jacobians are forward mode (``"reverse"`` is an
  ``UnsupportedError``); Hessians are forward over reverse and Hessian-vector products reverse
  over reverse (the gradient of ``sum(grad * _v)``), in every mode.
* ``max``/``min`` (reductions, and elementwise ``max(a, b)``) split the gradient evenly among
  tied elements, as ``torch.amax`` and ``jnp.max`` do; ``torch.max(x, dim)``
  gives it all to one index instead. ``relu'(0) = 0``, ``abs'(0) = 0`` as in the scalar layer.
* ``simplify=False`` skips SymPy's simplification of elementwise derivatives (the peephole
  rewrites always apply); ``cse=False`` turns off shared elementwise subexpressions;
  ``cache=True`` keeps built functions in memory and in the disk cache, like scalar functions
  (:mod:`symdiff.pipeline`): another process asking the same loads the module.
* ``CompiledFunction.exprs`` holds one :class:`~symdiff.tensor.formula.TensorFormula` per
  output: a ``str`` with the formula in the input language, e.g.
  ``X.T @ (-y*sigmoid(-(X @ w)*y))``, plus ``.shape`` and ``.latex`` (SymPy has no expressions
  for axis reductions or slicing); ``.source`` imports only NumPy.
* A Python function is traced on arrays of the declared shapes (:mod:`symdiff.tensor.trace`);
  the compiled function keeps its signature (parameters in the ``def``'s order, defaults,
  keyword-only markers; ``_v`` of ``hvp`` last, keyword-only after a default), and a traced
  function given to ``jacobian`` may return a tuple of same-shaped arrays (the rows);
  ``sd.derive(expr, wrt=..., shapes=...)`` records the backward walk's rules as steps
  (:mod:`symdiff.tensor.steps`).
* NumPy arrays a traced function closes over or builds (``X`` in ``np.sum((X @ w - y)**2)``,
  ``np.eye(3)``, masks) are bound constants (:mod:`symdiff.constants`): trailing parameters
  ``_c0, ...`` of the module, keyed by shape and dtype, captured when traced and passed by the
  compiled function (``g.bind(X=...)`` rebinds them).
"""

from __future__ import annotations
