RIGHT = "return dout * mask / (1 - self.p)  #"

PLANTED = [
    ("mask_not_applied", [(RIGHT, "return dout / (1 - self.p)  #")]),
    ("mask_not_applied", [(RIGHT, "return dout  #")]),
    ("not_rescaled", [(RIGHT, "return dout * mask  #")]),
    ("not_rescaled", [(RIGHT, "return np.where(self.mask, dout, 0.0)  #")]),
    ("wrong_sign", [(RIGHT, "return -dout * mask / (1 - self.p)  #")]),
]

CORRECT = [
    [(RIGHT, "return np.where(mask, dout / (1 - self.p), 0.0)  #")],
    [(RIGHT, "return dout * (mask / (1 - self.p))  #")],
    [(RIGHT, "scale = 1.0 / (1.0 - self.p)\n        return dout * mask * scale  #")],
]
