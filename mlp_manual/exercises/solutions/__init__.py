"""The reference answers, one module per exercise, each a student-style file whose marked part
(``# >>> write here:`` to ``# <<<``) the scaffold cuts out (exercises/files.py)."""
