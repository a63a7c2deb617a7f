// A webhook-operator receiver with Go's standard library only.
//
//	WEBHOOK_SECRET=<the webhook's secret> PORT=9000 go run main.go
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

const tolerance = 5 * time.Minute

var (
	signaturePattern = regexp.MustCompile(`^sha256=([0-9a-fA-F]{64})$`)
	timestampPattern = regexp.MustCompile(`^[0-9]{1,12}$`)
)

// Envelope is the JSON body of a delivery; Payload is a DeploymentPayload for deployment.* events.
type Envelope struct {
	ID        string          `json:"id"`
	EventType string          `json:"event_type"`
	Timestamp string          `json:"timestamp"`
	ProjectID *int64          `json:"project_id"`
	Payload   json.RawMessage `json:"payload"`
}

type DeploymentPayload struct {
	DeploymentID  int64   `json:"deployment_id"`
	ProjectID     int64   `json:"project_id"`
	ProjectName   string  `json:"project_name"`
	Environment   string  `json:"environment"`
	Branch        *string `json:"branch"`
	CommitSHA     *string `json:"commit_sha"`
	CommitMessage *string `json:"commit_message"`
	URL           *string `json:"url"`
	Status        string  `json:"status"`
	ErrorMessage  *string `json:"error_message"`
	StartedAt     *string `json:"started_at"`
	FinishedAt    *string `json:"finished_at"`
}

// VerificationError says which check a delivery failed.
type VerificationError struct{ Reason, Message string }

func (e *VerificationError) Error() string { return "webhook verification failed: " + e.Message }

func failed(reason, message string) error { return &VerificationError{reason, message} }

// VerifyWebhook checks a delivery's signature and the age of its timestamp; returns the envelope.
// body is the raw request body.
func VerifyWebhook(secret, body []byte, header http.Header, tolerance time.Duration) (*Envelope, error) {
	timestamps, signatures := header.Values("X-Webhook-Timestamp"), header.Values("X-Webhook-Signature")
	if len(timestamps) == 0 {
		return nil, failed("missing_timestamp", "the X-Webhook-Timestamp header is missing")
	}
	if len(signatures) == 0 {
		return nil, failed("missing_signature", "the X-Webhook-Signature header is missing")
	}
	timestamp, signature := strings.Join(timestamps, ", "), strings.Join(signatures, ", ")
	if !timestampPattern.MatchString(timestamp) {
		return nil, failed("malformed_timestamp", "X-Webhook-Timestamp is not Unix seconds")
	}
	match := signaturePattern.FindStringSubmatch(signature)
	if match == nil {
		return nil, failed("malformed_signature", "X-Webhook-Signature is not sha256=<hex>")
	}
	given, _ := hex.DecodeString(match[1])
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(timestamp + "."))
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), given) {
		return nil, failed("bad_signature", "the signature does not match")
	}
	seconds, _ := strconv.ParseInt(timestamp, 10, 64)
	age := time.Since(time.Unix(seconds, 0))
	if age > tolerance {
		return nil, failed("timestamp_too_old", fmt.Sprintf("the delivery was signed %.0f s ago", age.Seconds()))
	}
	if -age > tolerance {
		return nil, failed("timestamp_in_future", fmt.Sprintf("the timestamp is %.0f s ahead", -age.Seconds()))
	}
	if !json.Valid(body) {
		return nil, failed("invalid_json", "the body is not JSON")
	}
	var envelope Envelope
	err := json.Unmarshal(body, &envelope)
	if err != nil || envelope.ID == "" || envelope.EventType == "" || !strings.HasPrefix(string(envelope.Payload), "{") {
		return nil, failed("invalid_envelope", "the body is not an event envelope")
	}
	return &envelope, nil
}

// Envelope ids already handled. In production: a unique key in your database, written in the same
// transaction as the work the event causes.
var (
	seenMutex sync.Mutex
	seenIDs   = map[string]bool{}
)

func receive(secret []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		event, err := VerifyWebhook(secret, body, r.Header, tolerance)
		if err != nil {
			var verification *VerificationError
			if errors.As(err, &verification) {
				http.Error(w, verification.Reason, http.StatusBadRequest)
			} else {
				http.Error(w, err.Error(), http.StatusBadRequest)
			}
			return
		}
		seenMutex.Lock()
		duplicate := seenIDs[event.ID]
		seenIDs[event.ID] = true
		seenMutex.Unlock()
		if duplicate {
			fmt.Fprint(w, "duplicate")
			return
		}
		var deployment DeploymentPayload
		if strings.HasPrefix(event.EventType, "deployment.") && json.Unmarshal(event.Payload, &deployment) == nil {
			fmt.Println("received", event.EventType, event.ID, deployment.Status)
		}
		fmt.Fprint(w, "ok")
	}
}

func main() {
	secret := os.Getenv("WEBHOOK_SECRET")
	if secret == "" {
		log.Fatal("set WEBHOOK_SECRET to the webhook's secret")
	}
	port := os.Getenv("PORT")
	if port == "" {
		port = "9000"
	}
	listener, err := net.Listen("tcp", ":"+port)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("listening on port", listener.Addr().(*net.TCPAddr).Port)
	log.Fatal(http.Serve(listener, receive([]byte(secret))))
}
