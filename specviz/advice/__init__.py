"""Advice: what to do with the model's answer.

- ``claims``: a vendor's claim ("up to 3x", "2.5x at batch 64") read, and what would have to be true
  for it to hold on a scenario: the α, acceptance length and vLLM rate it needs, the batches where it
  can hold.
- ``commands``: the vLLM and SGLang commands for a scenario, each release's facts (flags, methods,
  targets), the batch → draft-length schedule and the advice beside the command. One module while
  two engines share the schedule, the draft's name and the advice; an engine added later gets a
  module of its own.
- ``compat``: whether a draft's tokenizer and special tokens fit the target's.

May import: specviz.errors, specviz.i18n, specviz.settings, specviz.model, specviz.scenario,
specviz.calculator, specviz.workload.
Must not import: specviz.live, specviz.results, specviz.cli, specviz.charts, or Streamlit: advice is
computed from a scenario, never from stored runs.
"""
