"""The models: layers, stacks, the encoder-decoder and the decoder-only model,
and the configs they are built from.
"""
