// Package balances is where the front end learns what a card's address
// holds: the balance source (Source), read for many cards at once without
// one address's failure reaching another card (Read), and the figures as
// the API and the site show them, one card's and a group's total
// (Summarize, into views' shapes).
//
// Today the source is the History upstream itself (FromHistory: the
// counters and the newest confirmed transaction of chain.HistoryCache's
// first page); the chain follower will supply the same chain.Balance from
// the observations it records, behind the same Source, and nothing here or
// in the pages changes.
//
// What it depends on: chain (the Balance type and its sum) and views (the
// shapes). It knows no route, no store, no grant: callers pass only the
// addresses of the cards the caller may read.
package balances
