package seed

import (
	"fmt"
	"strings"
)

// DocumentRefs are the numbers a sample document prints.
type DocumentRefs struct {
	BillOfLading string
	Booking      string
	Containers   []string
}

// DocumentLines returns the lines of a typical document of type typ that
// prints refs: the classifier's and the extractor's test material, and
// the demo data's document text (here, so that the seeder needs nothing
// of docproc, which sits above db). Layouts follow the forms'
// usual order: title first, then labelled fields.
func DocumentLines(typ string, refs DocumentRefs) []string {
	boxes := strings.Join(refs.Containers, ", ")
	switch typ {
	case "bill_of_lading":
		booking := "Booking No: " + refs.Booking
		if refs.Booking == "" {
			booking = "Booking No: (none)"
		}
		return []string{
			"BILL OF LADING",
			"B/L No: " + refs.BillOfLading,
			booking,
			"Shipper: Acme Export Ltd, Shenzhen",
			"Consignee: Globex Imports Inc, Los Angeles",
			"Notify Party: Initech Customs Brokers",
			"Carrier: Maersk Line",
			"Vessel: MAERSK ESSEN",
			"Voyage: 412E",
			"Port of Loading: Yantian, China",
			"Port of Discharge: Los Angeles, USA",
			"Container No: " + boxes,
			"Freight: Prepaid",
			"Date of Issue: 2026-02-10",
		}
	case "commercial_invoice":
		return []string{
			"COMMERCIAL INVOICE",
			"Invoice No: INV-2026-0142",
			"Invoice Date: 2026-02-08",
			"Seller: Acme Export Ltd",
			"Buyer: Globex Imports Inc",
			"B/L No: " + refs.BillOfLading,
			"Description  Qty  Unit Price  Amount",
			"Steel brackets  1200  2.50  3000.00",
			"Currency: USD",
			"Incoterms: FOB Yantian",
			"Payment Terms: 30 days",
			"Total: USD 3000.00",
			"Country of Origin: China",
		}
	case "packing_list":
		return []string{
			"PACKING LIST",
			"Shipper: Acme Export Ltd",
			"Consignee: Globex Imports Inc",
			"B/L No: " + refs.BillOfLading,
			"Container No: " + boxes,
			"Marks and Numbers: ACME/LAX/1-40",
			"Packages: 40 cartons",
			"Net Weight: 9800 KG",
			"Gross Weight: 10400 KG",
			"Measurement: 28 CBM",
			"Date: 2026-02-09",
		}
	case "certificate_of_origin":
		return []string{
			"CERTIFICATE OF ORIGIN",
			"Exporter: Acme Export Ltd, Shenzhen",
			"Consignee: Globex Imports Inc",
			"Producer: Acme Manufacturing Co",
			"Country of Origin: China",
			"HS Code: 7326.90",
			"B/L No: " + refs.BillOfLading,
			"We hereby certify that the goods described are of the origin stated.",
			"Certifying Authority: Shenzhen Chamber of Commerce",
			"Date of Issue: 2026-02-07",
		}
	case "arrival_notice":
		return []string{
			"ARRIVAL NOTICE",
			"B/L No: " + refs.BillOfLading,
			"Consignee: Globex Imports Inc",
			"Notify Party: Initech Customs Brokers",
			"Carrier: Maersk Line",
			"Vessel: MAERSK ESSEN",
			"Voyage: 412E",
			"Port of Discharge: Los Angeles, USA",
			"ETA: 2026-03-05",
			"Container No: " + boxes,
			"Freight Charges: USD 2450.00 due before release",
			"Terminal: APM Terminals Pier 400",
			"Last Free Day: 2026-03-09",
		}
	case "delivery_order":
		return []string{
			"DELIVERY ORDER",
			"B/L No: " + refs.BillOfLading,
			"Consignee: Globex Imports Inc",
			"Carrier: Maersk Line",
			"Container No: " + boxes,
			"Release Number: REL-88213",
			"Trucker: Speedy Drayage LLC",
			"Deliver To: 1200 Warehouse Way, Ontario CA",
			"Pickup: APM Terminals Pier 400",
			"Last Free Day: 2026-03-09",
			"Date: 2026-03-04",
		}
	case "customs_entry":
		return []string{
			"ENTRY SUMMARY",
			"CBP Form 7501",
			"Entry No: 123-4567890-1",
			"Entry Type: 01",
			"Entry Date: 2026-03-05",
			"Importer of Record: Globex Imports Inc",
			"B/L No: " + refs.BillOfLading,
			"Port Code: 2704",
			"HTS: 7326.90.8688",
			"Country of Origin: China",
			"Entered Value: USD 3000.00",
			"Duty: USD 87.00",
			"Bond: Continuous",
			"Port of Discharge: Los Angeles",
		}
	}
	return []string{
		"Meeting notes",
		"Reference: " + refs.BillOfLading,
		fmt.Sprintf("Containers discussed: %s", boxes),
	}
}
