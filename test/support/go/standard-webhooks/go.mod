module webhook-operator/test/standard-webhooks-receiver

go 1.22

require github.com/standard-webhooks/standard-webhooks/libraries v0.0.1
