"""The model: what speculative decoding gains, from the acceptance math to a forward pass's time.

- ``spec``: the acceptance math (expected tokens per step, speedup, vLLM's rates, the best γ).
- ``architecture``: what a model is made of (parameters per component, attention layers, caches).
- ``hf_config``: a Hugging Face config.json of each supported family read into an architecture
  (``family_deepseek_v4`` and ``family_kimi_k3``: DeepSeek-V4's and Kimi-K3's, which it registers;
  ``config_fields``: what each field may hold, checked before any reader sees it; ``config_parts``:
  what a reader counts, and the layers several families share).
- ``quantization``: a checkpoint's quantization_config read into each component's format.
- ``dtypes``: weight and KV-cache formats, and the precision a model is served at.
- ``roofline``: what one forward pass of a model costs on given hardware (FLOPs, bytes, regime).
- ``mtp``: a target's MTP layers as a draft (which engines run them, the positions they were trained
  for, the acceptance each reused position keeps).
- ``published``: published acceptance of served pairs, starting points for α.
- ``drafters``: the drafts as models (how each kind proposes its positions, the head or drafter its
  pass runs, derived from the target where it has no config of its own).
- ``step``: a whole speculative step (the drafts of each kind and the verify pass) at an engine's
  costs, precision and tensor parallelism.
- ``calibration``: the engines' cost priors, the band, and fits to measured speedups.
- ``fidelity``: the step model against published measurements.
- ``memory``: what a GPU holds while it serves, and the largest batch that fits.
- ``simulate``: tokens per step and the latency a client sees, simulated step by step.
- ``zero_accept``: seed 002's zero-accept share, which moves the latency tail at a fixed mean.
- ``preset_rows``: the shipped preset files (``data/*.csv``) read as rows, for every loader.

May import: specviz.errors, specviz.i18n, specviz.settings.
Must not import: specviz.scenario, specviz.calculator, specviz.workload, specviz.live, specviz.results,
specviz.advice, specviz.cli, specviz.charts, or Streamlit: the model knows numbers, not pages or files
of results.
"""
