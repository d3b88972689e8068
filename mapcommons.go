// Package mapcommons is the domain of the mapcommons server: the types of
// datasets, features, users and the rules about them, and the service
// interfaces that stores implement. It does no I/O of its own.
package mapcommons
