"""What several judges share: a competitive-programming sample's plan and tally, the judging modes, a problem's
checker, EvalPlus's oracles, and a program in another language run as steps."""
