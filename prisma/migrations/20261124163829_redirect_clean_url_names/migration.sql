-- AlterEnum
-- This migration adds more than one value to an enum.
-- With PostgreSQL versions 11 and earlier, this is not possible
-- in a single migration. This can be worked around by creating
-- multiple migrations, each migration adding only one value to
-- the enum.


ALTER TYPE "RedirectType" ADD VALUE 'clean_url_to_html';
ALTER TYPE "RedirectType" ADD VALUE 'html_to_clean_url';
