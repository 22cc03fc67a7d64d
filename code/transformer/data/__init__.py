"""The data the book trains on: the tokenizer, the toy tasks and their batches."""
