// A page driven in Chromium beside another test file on two cores: a form filled field by field
// with the API's answers took over the default 60 s once (load 10, a full run). Each browser test
// gets 120 s; a test that needs more says so itself.
jest.setTimeout(120_000);
