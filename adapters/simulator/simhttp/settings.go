package simhttp

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/oncehq/once/adapters/simulator/simcore"
	"github.com/oncehq/once/domain/model"
)

// The platform settings of ServerOptions in the forms `once sim` takes
// them: "shopify=200ms" for a latency, "shopify=40:2" for a bucket (its
// capacity, then its leak per second), "shopify@30s+10m" for an outage
// (down 30 s after the start, for 10 min; without "+…", for ever).

// ParsePlatformLatency reads platform=duration pairs.
func ParsePlatformLatency(pairs map[string]string) (map[string]time.Duration, error) {
	return parsePerPlatform(pairs, func(v string) (time.Duration, error) {
		d, err := time.ParseDuration(v)
		if err == nil && d < 0 {
			err = errors.New("a latency cannot be negative")
		}
		return d, err
	})
}

// ParseBuckets reads platform=capacity:leak pairs.
func ParseBuckets(pairs map[string]string) (map[string]simcore.BucketSize, error) {
	return parsePerPlatform(pairs, func(v string) (simcore.BucketSize, error) {
		capacity, leak, ok := strings.Cut(v, ":")
		if !ok {
			return simcore.BucketSize{}, errors.New("a bucket is capacity:leak_per_second, e.g. 40:2")
		}
		var size simcore.BucketSize
		var err error
		if size.Capacity, err = strconv.Atoi(capacity); err != nil {
			return size, fmt.Errorf("capacity %q is not a whole number", capacity)
		}
		if size.LeakPerSecond, err = strconv.ParseFloat(leak, 64); err != nil {
			return size, fmt.Errorf("leak %q is not a number", leak)
		}
		return size, size.Validate()
	})
}

// ParseOutage reads platform@from[+for].
func ParseOutage(s string) (Outage, error) {
	platform, when, ok := strings.Cut(s, "@")
	if !ok {
		return Outage{}, fmt.Errorf("outage %q: the form is platform@from[+for], e.g. shopify@30s+10m", s)
	}
	from, length, hasLength := strings.Cut(when, "+")
	o := Outage{Platform: platform}
	var err error
	if o.From, err = time.ParseDuration(from); err == nil && hasLength {
		o.For, err = time.ParseDuration(length)
	}
	if err == nil {
		err = o.validate()
	}
	if err != nil {
		return Outage{}, fmt.Errorf("outage %q: %w", s, err)
	}
	return o, nil
}

func (o Outage) validate() error {
	if o.From < 0 || o.For < 0 {
		return errors.New("an outage's start and length cannot be negative")
	}
	return knownPlatform(o.Platform)
}

func parsePerPlatform[T any](pairs map[string]string, parse func(string) (T, error)) (map[string]T, error) {
	out := make(map[string]T, len(pairs))
	for platform, v := range pairs {
		if err := knownPlatform(platform); err != nil {
			return nil, err
		}
		t, err := parse(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", platform, v, err)
		}
		out[platform] = t
	}
	return out, nil
}

func knownPlatform(p string) error {
	if !model.ValidPlatform(p) {
		return fmt.Errorf("unknown platform %q (one of %s)", p, strings.Join(model.Platforms, ", "))
	}
	return nil
}

// validate refuses settings of unknown platforms and impossible values.
func (o ServerOptions) validate() error {
	var errs []error
	for p, d := range o.PlatformLatency {
		errs = append(errs, knownPlatform(p))
		if d < 0 {
			errs = append(errs, fmt.Errorf("%s: a latency cannot be negative", p))
		}
	}
	for _, buckets := range []map[string]simcore.BucketSize{o.ShopBuckets, o.PlatformBuckets} {
		for p, size := range buckets {
			errs = append(errs, knownPlatform(p), size.Validate())
		}
	}
	for _, out := range o.Outages {
		errs = append(errs, out.validate())
	}
	return errors.Join(errs...)
}
