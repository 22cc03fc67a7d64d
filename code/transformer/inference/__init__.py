"""Inference: greedy decoding for the encoder-decoder, sampling for the decoder-only
model.
"""
