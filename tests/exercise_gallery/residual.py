RIGHT = "return dout + df  #"

PLANTED = [
    ("missing_skip_path", [(RIGHT, "return df  #")]),
    ("missing_skip_path", [(RIGHT, "dx = dout\n        dx = df\n        return dx  #")]),
    ("gradient_overwritten", [(RIGHT, "return dout  #")]),
    ("gradient_overwritten", [(RIGHT, "dx = df\n        dx = dout\n        return dx  #")]),
    ("wrong_sign", [(RIGHT, "return -(dout + df)  #")]),
]

CORRECT = [
    [(RIGHT, "dx = dout.copy()\n        dx += df\n        return dx  #")],
    [(RIGHT, "return df + dout  #")],
    [("df = self.linear.backward(self.tanh.backward(dout))  # (N, D)",
      "dpre = dout * (1 - self.tanh.out ** 2)  # (N, D)\n        df = self.linear.backward(dpre)  # (N, D)")],
]
