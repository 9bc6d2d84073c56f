package main

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream"
	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v3/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/components/forwarder"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// watermillPeer is watermill's outbox: messages published through the
// forwarder's envelope publisher into a watermill-sql table (the backlog),
// and the Forwarder, subscribed to that table, publishing each one to
// watermill-redisstream. This is the setup the watermill docs give for
// "publish in the same transaction as the business write".
type watermillPeer struct {
	// Batch is the SQL subscriber's SubscribeBatchSize.
	Batch    int
	RedisURL string
}

// forwarderTopic is the watermill-sql topic the envelopes wait in.
const forwarderTopic = "outbox"

func (watermillPeer) Name() string    { return "watermill" }
func (watermillPeer) IDField() string { return redisstream.UUIDHeaderKey }

func (w watermillPeer) schema() watermillsql.DefaultPostgreSQLSchema {
	return watermillsql.DefaultPostgreSQLSchema{SubscribeBatchSize: w.Batch}
}

func openStdDB(dbURL string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		return nil, err
	}
	return stdlib.OpenDB(*cfg), nil
}

func (w watermillPeer) subscriber(db *sql.DB) (*watermillsql.Subscriber, error) {
	return watermillsql.NewSubscriber(db, watermillsql.SubscriberConfig{
		ConsumerGroup:  "forwarder",
		SchemaAdapter:  w.schema(),
		OffsetsAdapter: watermillsql.DefaultPostgreSQLOffsetsAdapter{},
	}, watermill.NopLogger{})
}

func (w watermillPeer) Load(ctx context.Context, dbURL, stream string, events []event) error {
	db, err := openStdDB(dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	sub, err := w.subscriber(db)
	if err != nil {
		return err
	}
	if err := sub.SubscribeInitialize(forwarderTopic); err != nil {
		return err
	}
	_ = sub.Close()

	for _, ws := range byWorkspace(events) {
		for _, part := range chunks(ws, 1000) {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			sqlPub, err := watermillsql.NewPublisher(tx, watermillsql.PublisherConfig{SchemaAdapter: w.schema()}, watermill.NopLogger{})
			if err != nil {
				_ = tx.Rollback()
				return err
			}
			pub := forwarder.NewPublisher(sqlPub, forwarder.PublisherConfig{ForwarderTopic: forwarderTopic})
			msgs := make([]*message.Message, len(part))
			for i, e := range part {
				msgs[i] = message.NewMessage(e.ID, e.Payload)
				msgs[i].Metadata.Set("workspace_id", e.Workspace)
			}
			if err := pub.Publish(stream, msgs...); err != nil {
				_ = tx.Rollback()
				return err
			}
			if err := tx.Commit(); err != nil {
				return err
			}
		}
	}
	_, err = db.ExecContext(ctx, `ANALYZE`)
	return err
}

func (w watermillPeer) Start(ctx context.Context, dbURL, _ string) (func(context.Context) error, error) {
	db, err := openStdDB(dbURL)
	if err != nil {
		return nil, err
	}
	rdb, err := newRedis(w.RedisURL)
	if err != nil {
		db.Close()
		return nil, err
	}
	closeAll := func() { rdb.Close(); db.Close() }
	sub, err := w.subscriber(db)
	if err != nil {
		closeAll()
		return nil, err
	}
	redisPub, err := redisstream.NewPublisher(redisstream.PublisherConfig{Client: rdb}, watermill.NopLogger{})
	if err != nil {
		closeAll()
		return nil, err
	}
	fwd, err := forwarder.NewForwarder(sub, redisPub, watermill.NopLogger{},
		forwarder.Config{ForwarderTopic: forwarderTopic, CloseTimeout: 10 * time.Second})
	if err != nil {
		closeAll()
		return nil, err
	}
	runErr := make(chan error, 1)
	go func() { runErr <- fwd.Run(ctx) }()
	select {
	case <-fwd.Running():
	case err := <-runErr:
		closeAll()
		return nil, errors.Join(errors.New("forwarder stopped before running"), err)
	}
	return func(context.Context) error {
		err := fwd.Close()
		<-runErr
		closeAll()
		return err
	}, nil
}
