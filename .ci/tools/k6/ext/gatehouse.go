// Package gatehouse is a k6 extension for Gatehouse load tests: it exposes the proof-of-work
// primitives the service uses, so k6 scenarios can solve challenges natively (k6 runs no WASM).
//
//	import gatehouse from 'k6/x/gatehouse';
//	const hex = gatehouse.argon2id('password', salt, 3, 4096, 1, 32);
//	const key = gatehouse.scryptBytes(nonceBytes, salt, 4096, 8, 1, 32); // N in blocks, as docs/pow.md
package gatehouse

import (
	"encoding/hex"
	"fmt"

	"github.com/grafana/sobek"
	"go.k6.io/k6/v2/js/modules"
	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/scrypt"
)

func init() {
	modules.Register("k6/x/gatehouse", new(RootModule))
}

// RootModule is the global module object; it hands each VU its own instance.
type RootModule struct{}

// ModuleInstance is the per-VU instance of the module.
type ModuleInstance struct{ vu modules.VU }

var (
	_ modules.Module   = &RootModule{}
	_ modules.Instance = &ModuleInstance{}
)

// NewModuleInstance implements modules.Module.
func (*RootModule) NewModuleInstance(vu modules.VU) modules.Instance {
	return &ModuleInstance{vu: vu}
}

// Exports implements modules.Instance.
func (mi *ModuleInstance) Exports() modules.Exports {
	return modules.Exports{Named: map[string]any{
		"argon2id":      mi.Argon2id,
		"argon2idBytes": mi.Argon2idBytes,
		"scrypt":        mi.Scrypt,
		"scryptBytes":   mi.ScryptBytes,
	}}
}

// Limits keep a mistyped scenario from exhausting the load generator's memory.
const (
	maxMemoryKiB = 1 << 20 // 1 GiB
	maxHashLen   = 1024
)

// Argon2id returns the hex encoding of Argon2id(password, salt) (RFC 9106, version 0x13, no secret,
// no associated data). password and salt are strings (UTF-8), ArrayBuffers or typed arrays.
func (mi *ModuleInstance) Argon2id(password, salt sobek.Value, iterations, memoryKiB, parallelism, hashLen int64) (string, error) {
	key, err := mi.derive(password, salt, iterations, memoryKiB, parallelism, hashLen)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(key), nil
}

// Argon2idBytes is Argon2id returning an ArrayBuffer instead of hex.
func (mi *ModuleInstance) Argon2idBytes(password, salt sobek.Value, iterations, memoryKiB, parallelism, hashLen int64) (sobek.ArrayBuffer, error) {
	key, err := mi.derive(password, salt, iterations, memoryKiB, parallelism, hashLen)
	if err != nil {
		return sobek.ArrayBuffer{}, err
	}
	return mi.vu.Runtime().NewArrayBuffer(key), nil
}

func (mi *ModuleInstance) derive(password, salt sobek.Value, iterations, memoryKiB, parallelism, hashLen int64) ([]byte, error) {
	pw, err := toBytes(mi.vu.Runtime(), password)
	if err != nil {
		return nil, fmt.Errorf("argon2id: password: %w", err)
	}
	s, err := toBytes(mi.vu.Runtime(), salt)
	if err != nil {
		return nil, fmt.Errorf("argon2id: salt: %w", err)
	}
	switch {
	case iterations < 1 || iterations > 1<<16:
		return nil, fmt.Errorf("argon2id: iterations must be in [1, 65536], got %d", iterations)
	case parallelism < 1 || parallelism > 255:
		return nil, fmt.Errorf("argon2id: parallelism must be in [1, 255], got %d", parallelism)
	case memoryKiB < 8*parallelism || memoryKiB > maxMemoryKiB:
		return nil, fmt.Errorf("argon2id: memoryKiB must be in [8*parallelism, %d], got %d", maxMemoryKiB, memoryKiB)
	case hashLen < 4 || hashLen > maxHashLen:
		return nil, fmt.Errorf("argon2id: hashLen must be in [4, %d], got %d", maxHashLen, hashLen)
	case len(s) < 8:
		return nil, fmt.Errorf("argon2id: salt must be at least 8 bytes, got %d", len(s))
	}
	return argon2.IDKey(pw, s, uint32(iterations), uint32(memoryKiB), uint8(parallelism), uint32(hashLen)), nil
}

// toBytes accepts a string (UTF-8 bytes), an ArrayBuffer, a typed array or a DataView.
func toBytes(rt *sobek.Runtime, v sobek.Value) ([]byte, error) {
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return nil, fmt.Errorf("expected string, ArrayBuffer or typed array, got %v", v)
	}
	switch x := v.Export().(type) {
	case string:
		return []byte(x), nil
	case []byte:
		return append([]byte(nil), x...), nil
	case sobek.ArrayBuffer:
		return append([]byte(nil), x.Bytes()...), nil
	case *sobek.ArrayBuffer:
		return append([]byte(nil), x.Bytes()...), nil
	}
	// Any other ArrayBuffer view (Int8Array, DataView, ...): copy its bytes through the buffer.
	obj := v.ToObject(rt)
	if buf, ok := obj.Get("buffer").Export().(sobek.ArrayBuffer); ok {
		off, n := obj.Get("byteOffset").ToInteger(), obj.Get("byteLength").ToInteger()
		b := buf.Bytes()
		if off >= 0 && n >= 0 && off+n <= int64(len(b)) {
			return append([]byte(nil), b[off:off+n]...), nil
		}
	}
	return nil, fmt.Errorf("expected string, ArrayBuffer or typed array, got %s", v.ExportType())
}

// Scrypt returns the hex encoding of scrypt(password, salt, N, r, p, keyLen) (RFC 7914).
// Gatehouse puzzles use N = memoryKiB, r = 8, p = parallelism (docs/pow.md).
func (mi *ModuleInstance) Scrypt(password, salt sobek.Value, n, r, p, keyLen int64) (string, error) {
	key, err := mi.scryptKey(password, salt, n, r, p, keyLen)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(key), nil
}

// ScryptBytes is Scrypt returning an ArrayBuffer instead of hex.
func (mi *ModuleInstance) ScryptBytes(password, salt sobek.Value, n, r, p, keyLen int64) (sobek.ArrayBuffer, error) {
	key, err := mi.scryptKey(password, salt, n, r, p, keyLen)
	if err != nil {
		return sobek.ArrayBuffer{}, err
	}
	return mi.vu.Runtime().NewArrayBuffer(key), nil
}

func (mi *ModuleInstance) scryptKey(password, salt sobek.Value, n, r, p, keyLen int64) ([]byte, error) {
	pw, err := toBytes(mi.vu.Runtime(), password)
	if err != nil {
		return nil, fmt.Errorf("scrypt: password: %w", err)
	}
	s, err := toBytes(mi.vu.Runtime(), salt)
	if err != nil {
		return nil, fmt.Errorf("scrypt: salt: %w", err)
	}
	switch {
	case n < 2 || n&(n-1) != 0:
		return nil, fmt.Errorf("scrypt: N must be a power of two >= 2, got %d", n)
	case r < 1 || p < 1 || r*p >= 1<<30:
		return nil, fmt.Errorf("scrypt: r and p must be >= 1 with r*p < 2^30, got r=%d p=%d", r, p)
	case 128*r*n/1024 > maxMemoryKiB:
		return nil, fmt.Errorf("scrypt: 128*r*N must be at most %d KiB", maxMemoryKiB)
	case keyLen < 4 || keyLen > maxHashLen:
		return nil, fmt.Errorf("scrypt: keyLen must be in [4, %d], got %d", maxHashLen, keyLen)
	}
	return scrypt.Key(pw, s, int(n), int(r), int(p), int(keyLen))
}
