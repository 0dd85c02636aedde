package custkeys

// HoldBeforeUse makes every decision's finish call f after its answer
// verified and before the UPDATE that records the counter (nil: none).
func (s *Service) HoldBeforeUse(f func()) { s.beforeUse = f }
