package mapcommons

import (
	"strings"
	"testing"
	"time"
)

// TestTOTPVectors: RFC 6238 appendix B, the SHA-1 column (8 digits, the
// 20-byte ASCII secret "12345678901234567890").
func TestTOTPVectors(t *testing.T) {
	secret := []byte("12345678901234567890")
	for unix, want := range map[int64]string{
		59: "94287082", 1111111109: "07081804", 1111111111: "14050471",
		1234567890: "89005924", 2000000000: "69279037", 20000000000: "65353130",
	} {
		if got := HOTP(secret, uint64(TOTPStep(time.Unix(unix, 0))), 8); got != want {
			t.Errorf("T=%d: %s, want %s", unix, got, want)
		}
	}
	// RFC 4226 appendix D, the 6-digit HOTP values.
	for i, want := range []string{"755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"} {
		if got := HOTP(secret, uint64(i), 6); got != want {
			t.Errorf("HOTP counter %d: %s, want %s", i, got, want)
		}
	}
}

// TestMatchTOTP: a code of now's step or one either side matches, once;
// others do not.
func TestMatchTOTP(t *testing.T) {
	secret := NewTOTPSecret()
	now := time.Unix(1800000000, 0)
	cur := TOTPStep(now)
	for d := int64(-1); d <= 1; d++ {
		if s, ok := MatchTOTP(secret, TOTPCode(secret, cur+d), now, 0); !ok || s != cur+d {
			t.Errorf("step %+d: %d %v", d, s, ok)
		}
	}
	for _, d := range []int64{-2, 2} {
		if _, ok := MatchTOTP(secret, TOTPCode(secret, cur+d), now, 0); ok {
			t.Errorf("step %+d matched", d)
		}
	}
	if _, ok := MatchTOTP(secret, TOTPCode(secret, cur), now, cur); ok {
		t.Error("a used step matched again")
	}
	if _, ok := MatchTOTP(secret, "12345", now, 0); ok {
		t.Error("a short code matched")
	}
	uri := TOTPURI("Map Commons", "ann", secret)
	if !strings.HasPrefix(uri, "otpauth://totp/Map%20Commons:ann?") || !strings.Contains(uri, "secret="+TOTPSecretText(secret)) {
		t.Errorf("uri %s", uri)
	}
	codes, hashes := NewRecoveryCodes()
	if len(codes) != RecoveryCodes || !IsRecoveryCode(codes[0]) || HashRecoveryCode(strings.ToUpper(codes[0])) != hashes[0] || codes[0] == codes[1] {
		t.Errorf("recovery codes %v", codes)
	}
}
