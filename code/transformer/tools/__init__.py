"""Tools around a model: recording attention, inspecting shapes, counting cost,
translating to and from torch.nn, and two other ways of writing multi-head attention.
"""
