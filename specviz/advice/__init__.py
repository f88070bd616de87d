"""Advice: what to do with the model's answer.

- ``claim_words``: a vendor's claim read from its words ("up to 3x", "2.5x at batch 64", "35%
  slower"): its figure, batch and percentage.
- ``claim_sentence``: a slide's whole sentence read: its hardware, model, method, precision, batch,
  dataset, and what it leaves out.
- ``claim_figure``: which of a sentence's figures is its claim (a speedup, or a slowdown said around
  its figure), and which are counts of GPUs, names or other ratios.
- ``claim_over``: what a claim's figure is compared with: a drafting method ("over EAGLE-3"), other
  words ("than vLLM", "gấp 1,5 lần vLLM") or plain decoding, and what a Claims link says of it.
- ``claims``: what would have to be true for a claim to hold on a scenario: the α, acceptance length
  and vLLM rate it needs, the batches where it can hold, and the verdict.
- ``slowdown``: the same for a claimed slowdown ("35% slower at 64 users", a figure below 1): the
  highest acceptance at which it holds, and whether any does.
- ``claim_verdict``: the words of a claim's check: its headline, reasons and conditions, the ranges
  of batches they name, and the "at least" rounding of every figure in them.
- ``evidence``: which published results and stored runs are evidence about a scenario: of the same
  kind of setting (beside a claim), of this very setup (which overrules the model), a pair's own
  published acceptance.
- ``commands``: vLLM's command for a scenario, each release's facts (flags, methods, targets), and
  what every engine's command shares of the models (the draft's name, the target's words).
- ``memory_flags``: what every engine's command says of memory and hosts (the largest batch, the
  context and the memory share as the page's memory fit has them; the token budget; the hosts).
- ``sglang``: SGLang's ``launch_server`` command and its adaptive tiers, each release's facts.
- ``draft_length``: the batch → draft-length schedule a command states, the batch × context map of
  where speculation pays, and the advice beside the command.
- ``trtllm``: TensorRT-LLM's ``trtllm-serve`` command and its YAML options, each release's facts.
- ``serving``: the command for the scenario's engine, whichever it is (the Deploy view's and
  ``serve``'s).
- ``compat``: whether a draft's tokenizer and special tokens fit the target's.

May import: specviz.errors, specviz.i18n, specviz.settings, specviz.model, specviz.scenario,
specviz.names, specviz.calculator, specviz.workload.
Must not import: specviz.live, specviz.results, specviz.cli, specviz.charts, or Streamlit: advice is
computed from a scenario, never from stored runs.
"""
