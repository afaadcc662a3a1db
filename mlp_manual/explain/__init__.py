"""Teaching views of one pass: the pass step by step (trace, text), as a computation graph
(graph), and one scalar at a time (scalar). Nothing here is used by training."""
