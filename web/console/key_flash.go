package console

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/views"
	"countersign/web/kit"
)

// keyNewKey holds a freshly issued API key between the POST that issues it
// and the one page that shows it: "assistant name" NUL "sealed secret".
const keyNewKey = "new_key"

// setKeyFlash keeps a new key's secret for the next page of this session
// only. The session's data is stored server-side, so the secret is sealed
// with a key derived from the session's cookie id, which the server never
// stores: the row holds nothing a reader of the database could use.
func setKeyFlash(c echo.Context, assistantName, secret string) {
	sess := kit.Session(c)
	aead, ok := keyFlashCipher(sess.ID)
	if !ok {
		return
	}
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	sealed := aead.Seal(nonce, nonce, []byte(secret), []byte(assistantName))
	sess.Values[keyNewKey] = assistantName + "\x00" + base64.RawStdEncoding.EncodeToString(sealed)
	kit.MarkDirty(sess)
	_ = sess.Save(c.Request(), c.Response())
}

// popKeyFlash returns the new key kept by setKeyFlash and forgets it, so a
// reload shows it no longer; nil when there is none.
func popKeyFlash(c echo.Context) *views.NewKeyNotice {
	sess := kit.Session(c)
	kept, _ := sess.Values[keyNewKey].(string)
	if kept == "" {
		return nil
	}
	delete(sess.Values, keyNewKey)
	kit.MarkDirty(sess)
	_ = sess.Save(c.Request(), c.Response())
	name, sealed, _ := strings.Cut(kept, "\x00")
	raw, err := base64.RawStdEncoding.DecodeString(sealed)
	aead, ok := keyFlashCipher(sess.ID)
	if err != nil || !ok || len(raw) < aead.NonceSize() {
		return nil
	}
	secret, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(name))
	if err != nil {
		return nil
	}
	return &views.NewKeyNotice{AssistantName: name, Secret: string(secret)}
}

func keyFlashCipher(sessionID string) (cipher.AEAD, bool) {
	if sessionID == "" {
		return nil, false
	}
	k := sha256.Sum256([]byte("countersign new key flash\x00" + sessionID))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, false
	}
	aead, err := cipher.NewGCM(block)
	return aead, err == nil
}
