"""Tools around a model: recording attention, inspecting shapes, counting cost,
translating to and from torch.nn, and the teaching variants of multi-head attention.
"""
