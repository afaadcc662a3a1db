PLANTED = [
    ("assign_not_accumulate", [("self.grad += 1.0 * out.grad", "self.grad = 1.0 * out.grad"),
                               ("other.grad += 1.0 * out.grad", "other.grad = 1.0 * out.grad")]),
    ("assign_not_accumulate", [("self.grad += other.data", "self.grad = other.data"),
                               ("other.grad += self.data", "other.grad = self.data")]),
    ("assign_not_accumulate", [("+= 1.0 * out.grad", "= out.grad"), ("self.grad += other.data", "self.grad = other.data"),
                               ("other.grad += self.data", "other.grad = self.data"),
                               ("self.grad += (1 - t**2)", "self.grad = (1 - t**2)")]),
    ("mul_local_swapped", [("self.grad += other.data * out.grad", "self.grad += self.data * out.grad"),
                           ("other.grad += self.data * out.grad", "other.grad += other.data * out.grad")]),
    ("tanh_derivative_of_input", [("(1 - t**2) * out.grad", "(1 - self.data**2) * out.grad")]),
    ("tanh_derivative_of_input", [("(1 - t**2) * out.grad", "(1 - self.data * self.data) * out.grad")]),
    ("missing_upstream", [("self.grad += other.data * out.grad", "self.grad += other.data"),
                          ("other.grad += self.data * out.grad", "other.grad += self.data")]),
    ("missing_upstream", [("(1 - t**2) * out.grad", "(1 - t**2)")]),
]

CORRECT = [
    [("(1 - t**2) * out.grad", "(1 - math.tanh(self.data) ** 2) * out.grad")],
    [("self.grad += 1.0 * out.grad", "self.grad = self.grad + out.grad")],
    [("self.grad += other.data * out.grad", "self.grad += out.grad * other.data")],
]
