"""The end-of-turn model of the local speech server (docs/voice.md, "End of turn by a model").

Smart Turn v3.2 (BSD-2-Clause, about 8 M parameters on a Whisper-tiny encoder): given the last 8 s
of a caller's turn at 16 kHz, the probability that they have finished speaking. Its weights are the
file pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx of the pipecat-ai wheel
(turn-model.txt pins the wheel); `extract_smart_turn` takes that one file out at provisioning and
checks its sha256. The features are Whisper's log-mel spectrogram, made by faster-whisper's
FeatureExtractor (80 mel bins, as Pipecat's own Smart Turn code computes them), over the audio
normalised to zero mean and unit variance first, as Pipecat does.
"""

import hashlib
import os
import zipfile
from pathlib import Path

import numpy as np

SMART_TURN_MEMBER = "pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx"
SMART_TURN_SHA256 = "2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f"
RATE = 16_000
WINDOW_SECONDS = 8
# Above this the turn is complete (the model's own threshold).
COMPLETE_ABOVE = 0.5


def smart_turn_path(prefix: str) -> Path:
    """Where the model lives: beside the virtualenv `prefix` (sys.prefix)."""
    return Path(prefix).parent / "smart-turn" / "smart-turn-v3.2-cpu.onnx"


def extract_smart_turn(prefix: str, wheels: str) -> Path:
    """Takes the model out of the pipecat-ai wheel in `wheels` once; its sha256 is checked."""
    target = smart_turn_path(prefix)
    if target.is_file():
        return target
    (wheel,) = [name for name in os.listdir(wheels) if name.startswith("pipecat_ai-") and name.endswith(".whl")]
    with zipfile.ZipFile(os.path.join(wheels, wheel)) as archive:
        data = archive.read(SMART_TURN_MEMBER)
    digest = hashlib.sha256(data).hexdigest()
    if digest != SMART_TURN_SHA256:
        raise RuntimeError(f"Smart Turn's model has sha256 {digest}, not {SMART_TURN_SHA256}")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    partial.write_bytes(data)
    os.replace(partial, target)
    return target


class SmartTurn:
    """The model (the ONNX file at `path`) on one CPU thread, for 16 kHz float audio in -1..1."""

    def __init__(self, path: Path):
        import onnxruntime
        from faster_whisper.feature_extractor import FeatureExtractor

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        self._session = onnxruntime.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._input = self._session.get_inputs()[0].name
        self._features = FeatureExtractor(feature_size=80)

    def probability(self, audio: np.ndarray) -> float:
        """The probability that the speaker has finished, from the last 8 s of `audio` (zeros before)."""
        window = RATE * WINDOW_SECONDS
        audio = audio[-window:]
        audio = np.pad(audio, (window - audio.size, 0))
        normalised = (audio - audio.mean()) / np.sqrt(audio.var() + 1e-7)
        features = self._features(normalised.astype(np.float32), padding=0)
        (logits,) = self._session.run(None, {self._input: features[np.newaxis].astype(np.float32)})
        return float(logits[0][0])
