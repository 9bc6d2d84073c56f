package bullmq_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/queue/bullmq"
)

func TestBullMQRoutes(t *testing.T) {
	plain, err := bullmq.ParseRoutes("", "")
	require.NoError(t, err)
	assert.Equal(t, "store.credentials.verify", plain.Queue("store.credentials.verify"), "a queue per event type by default")
	assert.Zero(t, plain.Priority("store.credentials.verify"))

	r, err := bullmq.ParseRoutes(" store.credentials.verify = stores , media.process=media,*=jobs", "store.credentials.verify=1,ai.task=2097151")
	require.NoError(t, err)
	assert.Equal(t, "stores", r.Queue("store.credentials.verify"))
	assert.Equal(t, "media", r.Queue("media.process"))
	assert.Equal(t, "jobs", r.Queue("catalog.sync"), "* takes the rest")
	assert.Equal(t, 1, r.Priority("store.credentials.verify"))
	assert.Equal(t, bullmq.MaxPriority, r.Priority("ai.task"))
	assert.Equal(t, []string{"jobs", "media", "stores"}, r.QueuesOf("catalog.sync", "media.process"))
	assert.True(t, r.Names("media.process"), "a queue of its own")
	assert.True(t, r.Names("ai.task"), "a priority of its own")
	assert.False(t, r.Names("catalog.sync"), "* names no type")

	for _, bad := range [][2]string{
		{"a=b:c", ""}, {"a=b c", ""}, {"a", ""}, {"=q", ""}, {"a=q,a=r", ""},
		{"", "a=-1"}, {"", "a=2097152"}, {"", "a=high"},
	} {
		_, err := bullmq.ParseRoutes(bad[0], bad[1])
		assert.Error(t, err, "queues %q priorities %q", bad[0], bad[1])
	}
}
