package cmd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/engine"
)

// A standalone `cosmosctl emulator` announces itself (GET /_emulator/hello, no key
// needed), so that an endpoint is all a command needs to be given to use one: when the
// key, the database or the container is configured nowhere, the command asks the
// endpoint, and if it is a cosmosctl emulator takes its well-known key and its only
// database and container (or the embedded emulator's app and items, when it has them),
// and says so in one line on stderr. Anything configured wins; a real account, or an endpoint
// that does not answer within the account lookup's first attempt timeout, leaves the
// settings as they were, so that the usual "no key" error follows.

// announcer names the emulator at endpoint in notices and in the settings' sources.
func announcer(endpoint string) string { return "the cosmosctl emulator at " + endpoint }

// withAnnounced fills what the settings lack from the configured endpoint's
// announcement, when it is a cosmosctl emulator; see above. A command that uses no
// container (f.noContainer) asks only for a missing key. The error is a usage error: an
// emulator with a key of its own and no key given, or several databases or containers
// and none chosen.
func (f *connFlags) withAnnounced(ctx context.Context, io *IOStreams, s config.Settings) (config.Settings, error) {
	needPlace := !f.noContainer || f.optionalContainer
	if !lacksAnnounceable(s, needPlace) {
		return s, nil
	}
	h, ok := askEmulator(ctx, s)
	if !ok {
		// Interrupted while asking: that, not a missing key, is what happened.
		return s, ctx.Err()
	}
	a, problem := announcedSettings(h, s, needPlace, needPlace && !f.databaseOnly)
	if problem != nil && f.optionalContainer {
		a, problem = announcedSettings(h, s, false, false) // no container to take: none is used
	}
	if problem != nil {
		return s, problem
	}
	s, taken := s.WithAnnounced(a)
	if len(taken) > 0 {
		line := fmt.Sprintf("cosmosctl: %s is a cosmosctl emulator; using what it announces: %s", s.Endpoint, describeTaken(s, taken))
		io.noticeOnce(line, line, f.diagnostics)
	}
	return s, nil
}

// lacksAnnounceable reports whether an emulator's announcement could fill a setting
// that nothing configured: the key (with key authentication), and with needPlace the
// database or the container.
func lacksAnnounceable(s config.Settings, needPlace bool) bool {
	if !s.Configured() || s.Auth == config.AuthAAD {
		// Azure AD means a real account (see connect), and the embedded emulator
		// needs no announcement.
		return false
	}
	unset := func(name, value string) bool { return value == "" && s.Source(name) == config.SourceDefault }
	return s.Key == "" || needPlace && (unset("database", s.Database) || unset("container", s.Container))
}

// askEmulator asks the configured endpoint whether it is a cosmosctl emulator, for as
// long as the first attempt of an account lookup may take (capped by --attempt-timeout
// and --e2e-timeout): an emulator on loopback answers in a millisecond, and a real
// account or a dead address must cost a command no more than its own first request
// would. The hello is signed with the configured key, if any, so that an emulator with
// a key of its own lists its databases too.
func askEmulator(ctx context.Context, s config.Settings) (emulator.Hello, bool) {
	timeouts := engine.DefaultAttemptTimeouts().Capped(s.AttemptTimeout)
	wait := timeouts.Account[0]
	if s.E2ETimeout > 0 {
		wait = min(wait, s.E2ETimeout)
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	ctx = cosmos.WithConnectTimeout(ctx, timeouts.Connect[0])
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), UserAgent: userAgent()}
	defer tr.HTTP.CloseIdleConnections()
	if s.Key != "" && s.Auth != config.AuthAAD {
		if mk, err := cosmos.NewMasterKey(s.Key.Reveal()); err == nil {
			tr.Credential = mk
		}
	}
	h, err := emulator.AskHello(ctx, tr, s.Endpoint)
	return h, err == nil
}

// announcedSettings chooses, from an emulator's hello, the settings to fill: its key
// if it is the well-known one and none is configured, with needPlace the database, and
// with needContainer too the container. The problem is a usage error naming what to
// give.
func announcedSettings(h emulator.Hello, s config.Settings, needPlace, needContainer bool) (config.Announced, error) {
	by := announcer(s.Endpoint)
	a := config.Announced{By: by}
	if s.Key == "" {
		if !h.WellKnownKey {
			return a, usageErrorf("no key for %s: it is a cosmosctl emulator with a key of its own (not the well-known one); set COSMOSCTL_KEY, use --key-file, or put key_file in the profile", s.Endpoint)
		}
		a.Key = config.Secret(cosmos.EmulatorKey)
	}
	if !needPlace || !h.DatabasesListed {
		return a, nil
	}
	chosen := func(name, value string) bool { return value != "" || s.Source(name) != config.SourceDefault }
	db, err := pickDatabase(h, s.Database, chosen("database", s.Database), by)
	if err != nil {
		return a, err
	}
	if db == nil {
		if chosen("container", s.Container) || !needContainer {
			return a, nil // the request says what is missing
		}
		return a, usageErrorf("no container, and %s has no database %s to take one from (it has %s): give --database of one it has, or --container", by, s.Database, databaseIDs(h))
	}
	if !chosen("database", s.Database) {
		a.Database = db.ID
	}
	if needContainer && !chosen("container", s.Container) {
		coll, err := pickContainer(db, by)
		if err != nil {
			return a, err
		}
		a.Container = coll
	}
	return a, nil
}

// pickDatabase is the configured database (chosen), else the emulator's only one, else
// the embedded emulator's default when the emulator has it. A configured database the
// emulator does not have is left to the request to report (nil, nil).
func pickDatabase(h emulator.Hello, database string, chosen bool, by string) (*emulator.HelloDatabase, error) {
	find := func(id string) *emulator.HelloDatabase {
		if i := slices.IndexFunc(h.Databases, func(d emulator.HelloDatabase) bool { return d.ID == id }); i >= 0 {
			return &h.Databases[i]
		}
		return nil
	}
	switch {
	case chosen:
		return find(database), nil
	case len(h.Databases) == 1:
		return &h.Databases[0], nil
	case find(embeddedDatabase) != nil:
		return find(embeddedDatabase), nil
	case len(h.Databases) == 0:
		return nil, usageErrorf("no database: %s has none; start it with --database and --container, or give --database (COSMOSCTL_DATABASE, or database in the profile) of one you created", by)
	}
	return nil, usageErrorf("no database: %s has %s; choose one with --database (COSMOSCTL_DATABASE, or database in the profile)", by, databaseIDs(h))
}

func databaseIDs(h emulator.Hello) string {
	if len(h.Databases) == 0 {
		return "none"
	}
	ids := make([]string, len(h.Databases))
	for i, d := range h.Databases {
		ids[i] = d.ID
	}
	return strings.Join(ids, ", ")
}

// pickContainer is the database's only container, else the embedded emulator's
// default when the database has it.
func pickContainer(db *emulator.HelloDatabase, by string) (string, error) {
	ids := make([]string, len(db.Containers))
	for i, c := range db.Containers {
		ids[i] = c.ID
	}
	switch {
	case len(ids) == 1:
		return ids[0], nil
	case slices.Contains(ids, embeddedContainer):
		return embeddedContainer, nil
	case len(ids) == 0:
		return "", usageErrorf("no container: database %s of %s has none; give --container (COSMOSCTL_CONTAINER, or container in the profile) of one you created", db.ID, by)
	}
	return "", usageErrorf("no container: database %s of %s has %s; choose one with --container (COSMOSCTL_CONTAINER, or container in the profile)", db.ID, by, strings.Join(ids, ", "))
}

// describeTaken says what was taken from an announcement, for the notice: "its
// well-known key, database app, container items".
func describeTaken(s config.Settings, taken []string) string {
	parts := make([]string, 0, len(taken))
	for _, name := range taken {
		switch name {
		case "key":
			parts = append(parts, "its well-known key")
		case "database":
			parts = append(parts, "database "+s.Database)
		case "container":
			parts = append(parts, "container "+s.Container)
		}
	}
	return strings.Join(parts, ", ")
}

// announcedKey is withAnnounced for what needs a key only and must never fail or print
// (completion): the well-known key of a cosmosctl emulator when no key is configured.
func announcedKey(ctx context.Context, s config.Settings) config.Settings {
	if !lacksAnnounceable(s, false) {
		return s
	}
	h, ok := askEmulator(ctx, s)
	if !ok {
		return s
	}
	if a, err := announcedSettings(h, s, false, false); err == nil {
		s, _ = s.WithAnnounced(a)
	}
	return s
}

// announcedForShow is what `config show` shows of an announcement: every setting a
// command would take from it, with its source, and nothing when the command would
// refuse (an emulator with a key of its own and no key; several databases).
func announcedForShow(ctx context.Context, s config.Settings) config.Settings {
	if !lacksAnnounceable(s, true) {
		return s
	}
	h, ok := askEmulator(ctx, s)
	if !ok {
		return s
	}
	a, err := announcedSettings(h, s, true, true)
	if err != nil {
		return s
	}
	s, _ = s.WithAnnounced(a)
	return s
}
