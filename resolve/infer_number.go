package resolve

import (
	"context"
	"slices"
	"strings"

	"shipgraph/carrier/numbers"
	"shipgraph/model"
)

// InferTrackingNumber tells what a number is (container, bill of lading or
// booking) and which shipping lines it may belong to, from the shipping
// lines' reference data (one statement):
//
//   - an ISO 6346 container number (validated by its check digit): the
//     line whose SCAC, alternative SCAC or bill of lading prefix is the
//     owner code is certain (confidence 1); lines whose SCAC shares the
//     owner code's three letters are possible (0.5);
//   - otherwise a line whose bill of lading prefix or SCAC starts the
//     number makes it a bill of lading of that line (0.9);
//   - a number of digits alone, with no such prefix, is a booking number
//     of no predicted line (carriers' bookings are often bare digits).
//
// The decision is auto_select when exactly one candidate is certain
// enough (≥ 0.9), needs_confirmation when there are candidates but no
// such one, no_prediction when there is none. A number that is empty or
// has characters other than letters and digits (spaces and dashes
// aside) is a 422, as the create refuses it (trackingNumberFault).
func (r *Resolver) InferTrackingNumber(ctx context.Context, p *model.Principal, number string) (*model.InferredNumber, error) {
	if _, err := authenticated(p); err != nil {
		return nil, err
	}
	n, fault := trackingNumberFault(number)
	if fault != "" {
		return nil, invalidField("number", "This reference number is not valid: %s.", fault)
	}
	lines, err := r.DB.ShippingLinesForNumber(ctx, n)
	if err != nil {
		return nil, err
	}
	out := &model.InferredNumber{Number: n, Candidates: []*model.ScacCandidate{}}
	add := func(l *model.ShippingLine, confidence float64) {
		for _, c := range out.Candidates {
			if c.Scac == l.Scac {
				c.Confidence = max(c.Confidence, confidence)
				return
			}
		}
		out.Candidates = append(out.Candidates, &model.ScacCandidate{Scac: l.Scac, Name: l.Name, Confidence: confidence})
	}
	if numbers.ContainerShape(n) {
		out.NumberType = "container"
		passed := numbers.ValidContainer(n)
		out.Validation = model.NumberValidation{IsValid: &passed, Type: "container", CheckDigitPassed: &passed}
		if !passed {
			reason := "the check digit does not match (ISO 6346)"
			out.Validation.Reason = &reason
		}
		owner := n[:4]
		for _, l := range lines {
			if l.Scac == owner || slices.Contains(l.AlternativeScacs, owner) || l.BillOfLadingPrefix != nil && *l.BillOfLadingPrefix == owner {
				add(l, 1)
			}
		}
		for _, l := range lines {
			if l.Scac[:3] == owner[:3] {
				add(l, 0.5)
			}
		}
	} else {
		out.NumberType = "bill_of_lading"
		valid := len(n) >= 6
		out.Validation = model.NumberValidation{IsValid: &valid, Type: "shipment"}
		if !valid {
			reason := "too short for a bill of lading or booking number"
			out.Validation.Reason = &reason
		}
		for _, l := range lines {
			if p := l.BillOfLadingPrefix; p != nil && *p != "" && strings.HasPrefix(n, *p) || strings.HasPrefix(n, l.Scac) {
				add(l, 0.9)
			}
		}
		if len(out.Candidates) == 0 && strings.Trim(n, "0123456789") == "" {
			out.NumberType = "booking"
		}
	}
	sure := []*model.ScacCandidate{}
	for _, c := range out.Candidates {
		if c.Confidence >= 0.9 {
			sure = append(sure, c)
		}
	}
	switch {
	case len(sure) == 1 && (out.Validation.IsValid == nil || *out.Validation.IsValid):
		out.Decision, out.Selected = "auto_select", sure[0]
	case len(out.Candidates) > 0:
		out.Decision = "needs_confirmation"
	default:
		out.Decision = "no_prediction"
	}
	return out, nil
}
