package domain

import "testing"

func TestCheckPayloadSafe(t *testing.T) {
	cases := []struct {
		name string
		json string
		safe bool
	}{
		{"ids and versions", `{"store_id":"0d7c","credential_version":3,"operation_id":"x"}`, true},
		{"empty", ``, true},
		{"nested safe", `{"a":{"b":[1,"two",{"c":null}]}}`, true},
		{"api key", `{"api_key":"k"}`, false},
		{"camel api key", `{"apiKey":"k"}`, false},
		{"secret nested", `{"store":{"apiSecret":"k"}}`, false},
		{"credentials blob", `{"credentials":{"x":1}}`, false},
		{"password in array", `{"users":[{"password":"p"}]}`, false},
		{"cookie", `{"Set-Cookie":"a=b"}`, false},
		{"access token", `{"access_token":"t"}`, false},
		{"bearer value", `{"note":"Bearer abc.def"}`, false},
		{"jwt value", `{"note":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig"}`, false},
		{"presigned url", `{"url":"https://b.s3.amazonaws.com/o?X-Amz-Signature=abc"}`, false},
		{"pem", `{"note":"-----BEGIN RSA PRIVATE KEY-----\nMII"}`, false},
		{"not json", `{`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckPayloadSafe([]byte(c.json))
			if c.safe && err != nil {
				t.Fatalf("want safe, got %v", err)
			}
			if !c.safe {
				if err == nil {
					t.Fatal("want rejected, got safe")
				}
				if ErrorCode(err) != CodeUnsafePayload {
					t.Fatalf("want %s, got %s", CodeUnsafePayload, ErrorCode(err))
				}
			}
		})
	}
}
