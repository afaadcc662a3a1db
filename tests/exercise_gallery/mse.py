PLANTED = [
    ("missing_2", [("2 * diff / diff.size", "diff / diff.size")]),
    ("missing_2", [("2 * diff / diff.size", "diff / (diff.shape[0] * diff.shape[1])")]),
    ("divided_by_n_only", [("2 * diff / diff.size", "2 * diff / len(diff)")]),
    ("divided_by_n_only", [("2 * diff / diff.size", "2 * diff / pred.shape[0]")]),
    ("missing_1_over_n", [("2 * diff / diff.size", "2 * diff")]),
    ("missing_1_over_n", [("2 * diff / diff.size", "2 * (pred - y)")]),
    ("wrong_sign", [("2 * diff / diff.size", "2 * (y - pred) / diff.size")]),
    ("wrong_sign", [("2 * diff / diff.size", "-2 * diff / diff.size")]),
]

CORRECT = [
    [("2 * diff / diff.size", "(2.0 / pred.size) * (pred - y)")],
    [("2 * diff / diff.size", "2 * diff / (pred.shape[0] * pred.shape[1])")],
    [("2 * diff / diff.size", "np.multiply(diff, 2) / np.prod(diff.shape)")],
]
