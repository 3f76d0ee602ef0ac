// Command powbench is the native baseline of the proof-of-work benchmark: it computes one kind of hash in a
// loop on one goroutine for about -ms milliseconds and prints {"hashes":N,"ms":T,"cpuMs":C} as JSON.
package main

import (
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/scrypt"
)

func main() {
	alg := flag.String("alg", "argon2id", "argon2id | scrypt | pbkdf2-sha256 | sha256-string")
	mem := flag.Int("m", 4096, "argon2 memory in KiB")
	iter := flag.Int("t", 1, "argon2 passes, or PBKDF2 iterations")
	n := flag.Int("n", 1024, "scrypt N (r=8, p=1)")
	saltLen := flag.Int("salt", 32, "sha256-string: length of the ASCII salt before the decimal nonce")
	ms := flag.Int("ms", 1000, "duration in milliseconds")
	flag.Parse()

	salt := make([]byte, 16)
	pwd := make([]byte, 4)
	strSalt := make([]byte, *saltLen)
	for i := range strSalt {
		strSalt[i] = 'a' + byte(i%26)
	}
	var step func(i int) byte
	switch *alg {
	case "argon2id":
		step = func(i int) byte {
			pwd[0], pwd[1], pwd[2], pwd[3] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
			return argon2.IDKey(pwd, salt, uint32(*iter), uint32(*mem), 1, 32)[0]
		}
	case "scrypt":
		step = func(i int) byte {
			pwd[0], pwd[1], pwd[2], pwd[3] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
			out, err := scrypt.Key(pwd, salt, *n, 8, 1, 32)
			if err != nil {
				panic(err)
			}
			return out[0]
		}
	case "pbkdf2-sha256":
		step = func(i int) byte {
			pwd[0], pwd[1], pwd[2], pwd[3] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
			out, err := pbkdf2.Key(sha256.New, string(pwd), salt, *iter, 32)
			if err != nil {
				panic(err)
			}
			return out[0]
		}
	case "sha256-string":
		// What Cap and ALTCHA v1 hash per attempt: SHA-256 of salt + decimal nonce.
		buf := make([]byte, 0, *saltLen+20)
		step = func(i int) byte {
			buf = strconv.AppendInt(append(buf[:0], strSalt...), int64(i), 10)
			sum := sha256.Sum256(buf)
			return sum[0]
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown -alg", *alg)
		os.Exit(2)
	}

	var sink byte
	cpu0 := cpuMs()
	deadline := time.Duration(*ms) * time.Millisecond
	start := time.Now()
	hashes := 0
	for time.Since(start) < deadline {
		// Check the clock every few cheap hashes only.
		for j := 0; j < 64 && (*alg == "sha256-string" || j == 0); j++ {
			sink ^= step(hashes)
			hashes++
		}
	}
	elapsed := time.Since(start)
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{
		"hashes": hashes, "ms": float64(elapsed.Microseconds()) / 1000, "cpuMs": cpuMs() - cpu0, "sink": sink,
	})
}

// cpuMs is the CPU time (user + system) this process has used, in milliseconds: on a shared machine it
// measures the work done, where wall time also counts the time other processes held the cores.
func cpuMs() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}
