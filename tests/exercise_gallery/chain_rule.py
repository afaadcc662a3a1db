PLANTED = [
    ("seed_not_one", [("dL = 1.0  #", "dL = 0.0  #")]),
    ("missing_2", [("de = 2 * e * dL", "de = e * dL")]),
    ("missing_2", [("de = 2 * e * dL", "de = e")]),
    ("squared_not_derived", [("de = 2 * e * dL", "de = e**2 * dL")]),
    ("wrong_sign", [("de = 2 * e * dL", "de = -2 * e * dL")]),
    ("sum_local_gradient", [("dd = 1.0 * de", "dd = c * de")]),
    ("missing_upstream", [("dd = 1.0 * de", "dd = 1.0")]),
    ("missing_upstream", [("dc = 1.0 * de", "dc = 1.0")]),
    ("missing_upstream", [("dc = 1.0 * de", "dc = 1")]),
    ("product_local_swapped", [("da = b * dd", "da = a * dd")]),
    ("product_local_swapped", [("db = a * dd", "db = b * dd")]),
    ("missing_upstream", [("da = b * dd", "da = b")]),
    ("missing_upstream", [("db = a * dd", "db = a")]),
    ("wrong_sign", [("da = b * dd", "da = -b * dd")]),
]

CORRECT = [
    [("dd = 1.0 * de", "dd = de"), ("dc = 1.0 * de", "dc = de")],
    [("de = 2 * e * dL", "de = 2 * (a * b + c)")],
    [("da = b * dd", "da = 2 * (a * b + c) * b")],
]
