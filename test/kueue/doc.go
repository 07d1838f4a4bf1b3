// Package kueue holds the end-to-end tests of trainfn's output under Kueue
// (build tag e2e): a real control plane with fake nodes, and Kueue's own
// controller and webhooks, built from its module, admitting the jobs.
// Every kind is admitted as Kueue admits an operator's job, and a job
// waits whole behind another; test/onnode runs them to their end.
package kueue
