from tau.cli import main

raise SystemExit(main())
