"""The cleanup of translated bodies removes identity assignments and dead pure computations, keeping comments."""

from porter.passes.cleanup import clean_body


def body(*lines):
    return ["        " + line if line else "" for line in lines]


def test_identity_assignment_goes_and_its_comment_stays():
    cleaned = clean_body(body("x = view(x, b, g, c, h, w)", "x = x  # transpose(1, 2)",
                              "x = view(tf.transpose(x, [0, 2, 1, 3, 4]), b, n, h, w)", "return x"))
    assert cleaned == body("x = view(x, b, g, c, h, w)",
                           "# porter: `x` kept as it is: its transpose is folded into the next op; source: "
                           "transpose(1, 2)",
                           "x = view(tf.transpose(x, [0, 2, 1, 3, 4]), b, n, h, w)", "return x")


def test_dead_pure_computation_recomputed_by_the_next_line_goes():
    cleaned = clean_body(body('y = tf.einsum("abik,akbj->abij", att, v)',
                              'y = view(tf.einsum("abik,akbj->aibj", att, v), B, T, C)', "return y"))
    assert cleaned[1:] == body('y = view(tf.einsum("abik,akbj->aibj", att, v), B, T, C)', "return y")
    assert "porter: `y` is computed by the next line" in cleaned[0]


def test_computations_that_are_read_or_have_effects_stay():
    kept = [body('y = tf.einsum("ij,jk->ik", a, b)', "y = view(y, 4)", "return y"),  # read by the next line
            body("y = self.dropout(x)", "y = view(x, 4)", "return y"),  # a layer: random numbers, statistics
            body('y = tf.einsum("ij,jk->ik", a, b)', "if flag:", "    y = a", "return y")]  # not straight-line
    for lines in kept:
        assert clean_body(lines) == lines


def test_a_block_left_empty_keeps_a_pass():
    cleaned = clean_body(body("if flag:", "    x = x", "return x"))
    assert cleaned[1].strip().startswith("# porter:") and cleaned[2].strip() == "pass"


def test_pure_computation_nothing_reads_goes():
    """A standardised kernel's rows bound to `weight` and taken where they lie at the use (porter/rules/kernel_rows.py):
    the binding nothing reads goes; `self.weight` and a `weight=` keyword are not reads of it."""
    cleaned = clean_body(body("weight = view_in_layout(standardized_kernel(self.weight, eps=1e-5), [2, 3, 1, 0], "
                              "[2, 1, 0], 1, self.out_channels, -1)",
                              "return conv2d(x, TorchKernel(standardized_kernel(self.weight, weight=g)), self.bias)"))
    assert cleaned[1:] == body("return conv2d(x, TorchKernel(standardized_kernel(self.weight, weight=g)), self.bias)")
    assert "porter: `weight` is not computed here: nothing in the port reads it" in cleaned[0]
    read = body("weight = view(w, 4)", "return weight + 1")
    layer = body("weight = self.norm(w)", "return x")  # a layer: it may update statistics
    assert clean_body(read) == read and clean_body(layer) == layer
