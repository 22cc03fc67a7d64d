"""Training: the loss, the loop, the character language model, diagnostics."""
