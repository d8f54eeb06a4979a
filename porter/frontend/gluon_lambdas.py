"""Module-level lambdas of a Gluon file as functions: d2l's MXNet edition names its array helpers so
(`transpose = lambda a: a.T`, `reshape = lambda x, *args, **kwargs: x.reshape(*args, **kwargs)`), and its models call
them (`self.embedding(d2l.transpose(X))`). As a `def` of the same parameters returning the same expression, a
helper is translated like any other in-file function (its tensor methods by their rules) instead of being carried
over as written; the Python meaning is unchanged."""

import libcst as cst


def lambdas_as_functions(module, positions):
    """`module` with each top-level `name = lambda ...: expr` written `def name(...): return expr` (the new nodes at
    the assignment's position), and the new FunctionDefs by name."""
    body, made = [], {}
    for statement in module.body:
        function = _as_function(statement)
        if function is None:
            body.append(statement)
            continue
        if statement in positions:
            for node in (function, function.body, function.body.body[0], function.body.body[0].body[0]):
                positions[node] = positions[statement]
        body.append(function)
        made[function.name.value] = function
    return (module.with_changes(body=body) if made else module), made


def _as_function(statement):
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    assign = statement.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or not isinstance(
            assign.targets[0].target, cst.Name) or not isinstance(assign.value, cst.Lambda):
        return None
    function = assign.value
    returned = cst.SimpleStatementLine(body=[cst.Return(value=function.body)])
    return cst.FunctionDef(name=assign.targets[0].target, params=function.params,
                           body=cst.IndentedBlock(body=[returned]), leading_lines=statement.leading_lines)
