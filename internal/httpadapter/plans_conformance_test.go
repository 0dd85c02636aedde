package httpadapter_test

import (

	"countersign/internal/adapter/adaptertest"
)

var plansBackend adaptertest.Setup = nil

func plansFixture() adaptertest.Fixture { return adaptertest.Fixture{} }
