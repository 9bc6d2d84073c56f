package app

import (
	"fmt"
	"reflect"
	"strings"
	"time"
)

// setting is what an operator reads about one variable, declared in the
// file of its group, beside its field.
type setting struct {
	// help is the line `--help` prints.
	help string
	// doc is its meaning in the table of docs/configuration.md, in
	// markdown; empty: help.
	doc string
	// docDefault replaces the default in that table where the default is
	// no plain value (a dev secret, one per command or per storage).
	docDefault string
}

// settingGroup is a group's settings by variable, and the title of its
// table in docs/configuration.md.
type settingGroup struct {
	title string
	vars  map[string]setting
}

// configGroup is a group of Config: a struct of variables that declares
// their settings.
type configGroup interface{ settings() settingGroup }

// declaredGroup is a group of a Config with, in the struct's order, each
// variable's value and setting.
type declaredGroup struct {
	title string
	vars  []declaredVar
}

type declaredVar struct {
	name  string
	value reflect.Value
	setting
}

// declaredGroups walks c's groups. A variable without a setting, or a
// field of Config that is no group, is a bug TestEveryVariableHasHelp
// catches; here it panics.
func declaredGroups(c Config) []declaredGroup {
	v := reflect.ValueOf(c)
	groups := make([]declaredGroup, 0, v.NumField())
	for i := range v.NumField() {
		g, ok := v.Field(i).Interface().(configGroup)
		if !ok {
			panic(fmt.Sprintf("Config.%s is no configGroup", v.Type().Field(i).Name))
		}
		decl := g.settings()
		group := declaredGroup{title: decl.title}
		fields := v.Field(i)
		for j := range fields.NumField() {
			name, _, _ := strings.Cut(fields.Type().Field(j).Tag.Get("env"), ",")
			s, ok := decl.vars[name]
			if !ok {
				panic(fmt.Sprintf("%s (%s) has no setting in its group's table", name, fields.Type().Field(j).Name))
			}
			group.vars = append(group.vars, declaredVar{name: name, value: fields.Field(j), setting: s})
		}
		groups = append(groups, group)
	}
	return groups
}

// formatValue writes a value as it would be set: a duration the way it is
// usually written (48h, not 48h0m0s).
func formatValue(v reflect.Value) string {
	if d, ok := v.Interface().(time.Duration); ok {
		s := d.String()
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		if strings.HasSuffix(s, "h0m") {
			s = strings.TrimSuffix(s, "0m")
		}
		return s
	}
	return fmt.Sprint(v.Interface())
}
