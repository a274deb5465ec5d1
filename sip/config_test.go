package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The settings a bridged transfer and the callbacks of calls that came in need.

func baseEnv(t *testing.T) {
	t.Setenv("MEDIA_GATEWAY_URL", "http://127.0.0.1:8090")
	t.Setenv("MEDIA_STREAMS_TOKEN", "token")
	t.Setenv("MEDIA_CONTROL_TOKEN", "media-control")
	t.Setenv("SIP_CONTROL_TOKEN", "sip-control")
	t.Setenv("SIP_LISTEN", "127.0.0.1:5060")
}

func TestTransferMaxMinutes(t *testing.T) {
	baseEnv(t)
	cfg, err := loadConfig()
	if err != nil || cfg.transferMax != time.Hour {
		t.Fatalf("default: %v, %v", cfg.transferMax, err)
	}
	t.Setenv("TRANSFER_MAX_MINUTES", "0.5")
	if cfg, err := loadConfig(); err != nil || cfg.transferMax != 30*time.Second {
		t.Errorf("0.5: %v, %v", cfg.transferMax, err)
	}
	for _, bad := range []string{"0", "-1", "ten", "1441"} {
		t.Setenv("TRANSFER_MAX_MINUTES", bad)
		if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), "TRANSFER_MAX_MINUTES") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func TestMediaControlURL(t *testing.T) {
	baseEnv(t)
	cfg, err := loadConfig()
	if err != nil || cfg.controlURL != "http://127.0.0.1:8091" {
		t.Fatalf("default, the gateway's next port: %q, %v", cfg.controlURL, err)
	}
	t.Setenv("MEDIA_CONTROL_URL", "http://media:8091/")
	if cfg, err := loadConfig(); err != nil || cfg.controlURL != "http://media:8091" {
		t.Errorf("given: %q, %v", cfg.controlURL, err)
	}
	t.Setenv("MEDIA_CONTROL_URL", "")
	t.Setenv("MEDIA_GATEWAY_URL", "https://media.example.com")
	if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), "MEDIA_CONTROL_URL") {
		t.Errorf("a gateway URL without a port: %v", err)
	}
}

func TestTheThreeSecretsDiffer(t *testing.T) {
	baseEnv(t)
	t.Setenv("SIP_CONTROL_TOKEN", "media-control")
	if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), "must differ") {
		t.Errorf("SIP_CONTROL_TOKEN = MEDIA_CONTROL_TOKEN: %v", err)
	}
	t.Setenv("SIP_CONTROL_TOKEN", "sip-control")
	t.Setenv("MEDIA_CONTROL_TOKEN", "")
	if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), "MEDIA_CONTROL_TOKEN") {
		t.Errorf("MEDIA_CONTROL_TOKEN unset: %v", err)
	}
}

func TestControlListen(t *testing.T) {
	baseEnv(t)
	cfg, err := loadConfig()
	if err != nil || cfg.controlAddr != "127.0.0.1:8092" {
		t.Fatalf("default: %q, %v", cfg.controlAddr, err)
	}
	// The workers reach it by a name; it still listens on loopback only.
	t.Setenv("SIP_CONTROL_URL", "http://sip.internal:9092")
	if cfg, err := loadConfig(); err != nil || cfg.controlAddr != "127.0.0.1:9092" {
		t.Errorf("by name: %q, %v", cfg.controlAddr, err)
	}
	t.Setenv("SIP_CONTROL_LISTEN", "sip:8092")
	if cfg, err := loadConfig(); err != nil || cfg.controlAddr != "sip:8092" {
		t.Errorf("named: %q, %v", cfg.controlAddr, err)
	}
	for _, bad := range []string{"8092", "sip"} {
		t.Setenv("SIP_CONTROL_LISTEN", bad)
		if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), "SIP_CONTROL_LISTEN") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	t.Setenv("SIP_CONTROL_LISTEN", "")
	t.Setenv("SIP_CONTROL_URL", "http://127.0.0.1")
	if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), "SIP_CONTROL_URL") {
		t.Errorf("no port: %v", err)
	}
}

func TestControlTokensFromFiles(t *testing.T) {
	baseEnv(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// Compose: the tokens unset, their files kept by the secrets service.
	t.Setenv("MEDIA_CONTROL_TOKEN", "")
	t.Setenv("SIP_CONTROL_TOKEN", "")
	t.Setenv("MEDIA_CONTROL_TOKEN_FILE", write("media-control-token", "from-file-media\n"))
	t.Setenv("SIP_CONTROL_TOKEN_FILE", write("sip-control-token", "from-file-sip\n"))
	cfg, err := loadConfig()
	if err != nil || cfg.callbackToken != "from-file-media" || cfg.controlToken != "from-file-sip" {
		t.Fatalf("from files: %q %q, %v", cfg.callbackToken, cfg.controlToken, err)
	}
	// A value given outright wins over its file.
	t.Setenv("SIP_CONTROL_TOKEN", "given")
	if cfg, err := loadConfig(); err != nil || cfg.controlToken != "given" {
		t.Errorf("given: %q, %v", cfg.controlToken, err)
	}
	t.Setenv("SIP_CONTROL_TOKEN", "")
	for _, bad := range []string{filepath.Join(dir, "missing"), write("empty", " \n")} {
		t.Setenv("SIP_CONTROL_TOKEN_FILE", bad)
		if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), "SIP_CONTROL_TOKEN_FILE") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	// The same secret through two files is still one secret for two doors.
	t.Setenv("SIP_CONTROL_TOKEN_FILE", write("same", "from-file-media"))
	if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), "must differ") {
		t.Errorf("same secret: %v", err)
	}
}
