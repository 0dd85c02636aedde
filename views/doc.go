// Package views holds the console's templ components. Pages take view
// models built by the web layer; nothing here reads the database.
//
// A view model sits next to its view: it is declared at the top of the
// .templ file whose component renders it (task.templ declares TaskView),
// and a model several pages share sits with the shared component
// (components.templ, layout.templ). Go code beyond declarations and small
// methods sits in a .go file named for what it does: chart.go lays out the
// metrics page's charts.
package views
