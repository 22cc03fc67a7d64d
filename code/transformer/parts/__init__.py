"""The parts of a Transformer: attention, masks, norms, feed-forward networks,
embeddings and positions, each one idea in one module.
"""
